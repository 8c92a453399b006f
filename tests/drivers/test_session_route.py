"""The session wrappers' click-free route (their rows of st2/front/table.py, their core
st2/drivers/session_route.py): exactly the launched shape runs without click, with the click route's exit status and output; every other shape is
left to click."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from support import REPO
from st2.front import ShapeRefusal, parse as parse_shape
from st2.front.table import row_for

def parse(words: list[str], harness: str) -> tuple[dict[str, str], list[str]] | None:
    """``(option values, harness argv)`` of a session verb's words, or None outside its shape."""
    try:
        parsed = parse_shape(words, row_for(("driver", f"{harness}-session")).shape)
    except ShapeRefusal:
        return None
    return parsed.values, parsed.tail


LAUNCHED = ["--identity", "h.x", "--runtime-id", "h.x", "--", "claude", "--model", "m"]


def test_the_launched_shape_parses_and_nothing_else_does():
    assert parse(LAUNCHED, "claude") == (
        {"--identity": "h.x", "--runtime-id": "h.x"}, ["claude", "--model", "m"])
    assert parse(["--identity", "h.x", "--operator", "op", "--", "codex", "app-server"], "codex")
    for words in (["--identity=h.x", "--", "claude"],            # another spelling
                  ["--identity", "h.x", "--identity", "h.y", "--", "claude"],   # a repeat
                  ["--identity", "h.x", "--"],                    # no harness argv
                  ["--identity", "h.x", "claude"],                # no --
                  ["--identity", "-x", "--", "claude"],           # a value like an option
                  ["--identity", "h.x", "--operator", "op", "--", "claude"],    # not claude's option
                  ["--help"]):
        assert parse(words, "claude") is None, words


def run_entry(words: list[str], environment: dict) -> tuple[int, str, bool]:
    """``st2 <words>`` through the real entry point: exit status, stderr, whether click loaded."""
    code = ("import sys\nfrom st2.entry import main\nstatus = main(sys.argv[1:])\n"
            "sys.stderr.write('CLICK=%s\\n' % ('click' in sys.modules))\nsys.exit(status)\n")
    result = subprocess.run([sys.executable, "-c", code, *words], cwd=REPO, env=environment,
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    stderr, _, flag = result.stderr.rpartition("CLICK=")
    return result.returncode, stderr, flag.strip() == "True"


@pytest.mark.process
@pytest.mark.parametrize("identity, harness", [("h.x", ["sh", "-c", "exit 3"]), ("h.nobody", ["true"])])
def test_both_routes_end_the_same_and_only_the_launched_shape_skips_click(tmp_path, identity, harness):
    catalog = tmp_path / "catalog"
    (catalog / "agents" / "h" / "x").mkdir(parents=True)
    (catalog / "agents" / "h" / "x" / "agent.kdl").write_text('agent "x" {\n    argv "sh"\n}\n')
    environment = {key: value for key, value in os.environ.items() if not key.startswith("ST_")}
    environment.update(CATALOG=str(catalog), XDG_STATE_HOME=str(tmp_path / "state"))
    fast = run_entry(["driver", "claude-session", "--identity", identity, "--runtime-id", identity, "--", *harness],
                     environment)
    slow = run_entry(["driver", "claude-session", f"--identity={identity}", "--runtime-id", identity, "--", *harness],
                     environment)
    assert fast[2] is False and slow[2] is True
    assert fast[:2] == slow[:2]
    assert fast[0] == (3 if identity == "h.x" else 2)
