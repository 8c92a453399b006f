"""Every hot path (``st2.entry.HOT_PATHS``) loads only the standard library and st2's own light
modules: one parametrized probe over the whole table with one forbidden-module list, replacing
the separate per-package probes.

Each verb runs for real through the entry point in a fresh interpreter (so lazy imports on its
working path count, not just its module's top), in a hermetic home, catalog and state directory;
the probe then reports every module the run loaded. A verb added to the table is probed without
any edit here (:data:`RUNS` only gives the arguments a verb needs to do its work)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from st2.entry import HOT_PATHS
from support import REPO

pytestmark = pytest.mark.process

# One list. Third-party packages a hot path may never pay for, and st2's heavy layers (the click
# CLI, the supervisor and its runtime backends, the DING notifier, the roster, the authoring path,
# catalog-wide validation, declaration parsing).
FORBIDDEN = (
    "click", "pydantic", "pydantic_core", "psutil", "filelock", "sdnotify", "inotify_simple", "ckdl",
    "st2.cli", "st2.supervisor", "st2.ding", "st2.roster", "st2.doctor", "st2.authoring", "st2.authoring.validation",
    "st2.declarations", "st2.service", "st2.demo", "st2.delivery", "st2.bus.send", "st2.bus.envelope",
    "textual", "rich", "st2.top",  # the fleet view's UI: paid once, by `st2 top` alone
)

PAYLOAD = json.dumps({"session_id": "s", "trigger": "manual", "context_window": {"context_window_size": 1},
                      "rate_limits": {"five_hour": {"used_percentage": 1, "resets_at": 2}}})
# (verb, subverb) -> (arguments after the subverb, stdin). {catalog}/{tmp} are filled in.
RUNS: dict[tuple[str, str], tuple[list[str], str]] = {
    ("usage", "poll"): (["--timeout", "1"], ""),
    ("check", "producer-liveness"): (["{tmp}"], ""),
    ("check", "wait-probe"): (["report"], ""),
    ("driver", "claude-statusline"): (["--identity", "h.worker", "--catalog", "{catalog}"], PAYLOAD),
    ("driver", "claude-observe"): (["--identity", "h.worker", "--catalog", "{catalog}", "--event", "PreCompact"], PAYLOAD),
    ("driver", "claude-statusline-arm"): (["--identity", "h.worker", "--catalog", "{catalog}"], PAYLOAD),
    ("hook", "subagent-stop-liveness"): ([], "{}"),
    ("hook", "dispatch-guard"): ([], "{}"),
}

PROBE = """
import io, json, sys
report = sys.argv[1]
stdin = sys.stdin.read()
sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
from st2.entry import main
try:
    status = main(sys.argv[2:])
except SystemExit as exit:
    status = exit.code
with open(report, "w") as handle:
    json.dump({"status": status, "modules": sorted(sys.modules)}, handle)
"""


def forbidden(modules: list[str]) -> list[str]:
    """Loaded modules on the forbidden list, and any other module that is neither standard
    library nor st2's own."""
    stdlib = sys.stdlib_module_names
    return [name for name in modules
            if name.startswith(FORBIDDEN) and (name in FORBIDDEN or name.startswith(tuple(f + "." for f in FORBIDDEN)))
            or (name.split(".")[0] not in stdlib and name.split(".")[0] != "st2" and not name.startswith("_"))]


def run(words: list[str], stdin: str, tmp_path: Path, flags: tuple[str, ...] = (),
        extra_env: dict[str, str] | None = None) -> dict:
    catalog = tmp_path / "catalog"
    (catalog / "agents" / "h" / "worker").mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "CATALOG": str(catalog),
           "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "ST_CLAUDE_STATUSLINE_RENDERER": "true", "PYTHONPATH": str(REPO),
           "DELEGATION_KIT_USAGE_ENDPOINT": (REPO / "captures/anthropic-oauth-usage").as_uri() + "/missing.json",
           **(extra_env or {})}
    report = tmp_path / "report.json"
    subprocess.run([sys.executable, *flags, "-c", PROBE, str(report), *words], input=stdin, text=True, cwd=tmp_path,
                   env=env, capture_output=True, timeout=60)
    return json.loads(report.read_text())


@pytest.mark.parametrize("subcommand", sorted(HOT_PATHS), ids=" ".join)
def test_every_hot_path_loads_nothing_forbidden(subcommand, tmp_path: Path) -> None:
    arguments, stdin = RUNS.get(subcommand, ([], ""))
    arguments = [word.format(catalog=tmp_path / "catalog", tmp=tmp_path) for word in arguments]
    result = run([*subcommand, *arguments], stdin, tmp_path)
    assert isinstance(result["status"], int)  # the verb itself ran to an exit status
    assert HOT_PATHS[subcommand].split(":")[0] in result["modules"]
    assert forbidden(result["modules"]) == []


def test_the_probe_sees_what_a_click_verb_loads(tmp_path: Path) -> None:
    """The non-firing twin: the same probe over a click verb reports click and the CLI."""
    loaded = forbidden(run(["agents", "--json"], "", tmp_path)["modules"])
    assert "click" in loaded and "st2.cli" in loaded and "st2.roster" in loaded


# pathlib (with urllib.parse, ipaddress, fnmatch and ntpath behind it) costs a firing about a
# quarter of a bare interpreter start in a wheel install (benchmarks/hot_paths.py), so no hot path
# imports it: the modules they load compute with os.path (st2.fs.paths keeps a Path caller's kind).
# The probe runs with -S: a dev venv's editable-install finder, loaded by site, imports pathlib
# itself, which would hide a hot path's own import of it.
# typing (~4 ms) and dataclasses (inspect, ast, dis, tokenize: ~7 ms) likewise: the hot paths'
# value types are collections.namedtuple classes, and typing is imported only under TYPE_CHECKING.
STARTUP_FREE = ("pathlib", "urllib.parse", "ipaddress", "typing", "dataclasses", "inspect")


@pytest.mark.parametrize("subcommand", sorted(HOT_PATHS), ids=" ".join)
def test_no_hot_path_imports_what_costs_a_quarter_of_its_start(subcommand, tmp_path: Path) -> None:
    arguments, stdin = RUNS.get(subcommand, ([], ""))
    arguments = [word.format(catalog=tmp_path / "catalog", tmp=tmp_path) for word in arguments]
    result = run([*subcommand, *arguments], stdin, tmp_path, flags=("-S",))
    assert isinstance(result["status"], int)
    assert HOT_PATHS[subcommand].split(":")[0] in result["modules"]
    assert [name for name in STARTUP_FREE if name in result["modules"]] == []


def test_the_pathlib_probe_sees_a_rare_arm_that_imports_it(tmp_path: Path) -> None:
    """The non-firing twin: a wrapper session's SessionStart publishes the resumable session
    through the runtime's session store, which is pathlib-based, so the same -S probe reports it."""
    result = run(["driver", "claude-observe", "--identity", "h.worker", "--catalog", str(tmp_path / "catalog"),
                  "--event", "SessionStart"], json.dumps({"session_id": "s", "hook_event_name": "SessionStart"}),
                 tmp_path, flags=("-S",), extra_env={"ST2_CLAUDE_SESSION": "token", "ST2_CLAUDE_SESSION_SEQ": "1"})
    assert result["status"] == 0
    assert "pathlib" in result["modules"]
