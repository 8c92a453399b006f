"""`st2 message send` without click (st2/front/table.py, st2/front/verbs.py) is byte-identical to
the click command:
each argv runs through the real entry point and through the click CLI alone (st2.cli.run), on
identical copies of one catalog, and stdout, stderr, exit status and every file written must
match (the generated message filenames, time plus random suffix, normalized). The recognized
shapes must really take the click-free route (the click CLI never loaded), and every other shape must
fall back before it reads or writes anything."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, route_commands, st2_env

pytestmark = pytest.mark.process

FILENAME = re.compile(r"\d{13}-[a-z0-9]{6}\.md")

# (argv after `st2`, stdin, extra environment) for shapes the click-free route runs.
FAST = [
    (["message", "send", "robert", "--as", "h1.alice", "-m", "hello"], None, {}),
    (["message", "send", "h1.bob", "--as=h1.alice", "--message=hi", "--json", "--subject", "s",
      "--tags", " a, b,,", "--priority", "high"], None, {}),
    (["--catalog", "{catalog}", "message", "send", "--to-id", "carol-1", "--json"], "from stdin\n",
     {"ST_AGENT": "h1.alice"}),
    (["message", "send", "robert", "--as", "h1.alice", "--idempotency-key", "k1", "-m", "once", "--json"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "--in-reply-to", "not-a-message", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice"], "\udcff", {}),  # stdin not UTF-8
    (["--host", "h1", "message", "send", "robert", "--subject", "\x1b[31mred", "-m", "x", "--json",
      "--as", "h1.alice"], None, {}),
]
# Shapes that fall back to click: its usage, its errors, or names that do not resolve.
FALLBACK = [
    (["message", "send", "--help"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "x", "--priority", "urgent"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "x", "--bogus"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "x", "--bogus", "y"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "x", "--subj", "y"], None, {}),  # no abbreviations
    (["--version", "message", "send", "robert", "--as", "h1.alice", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-mx"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "-dash led"], None, {}),
    (["message", "send", "robert", "bob", "--as", "h1.alice", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "--as", "h1.carol", "-m", "x"], None, {}),
    (["message", "send", "nobody", "--as", "h1.alice", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "h1.nobody", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "../etc", "-m", "x"], None, {}),
    (["message", "send", "robert", "-m", "x"], None, {}),  # no acting identity, no operator
    (["message", "send", "bob", "--as", "h1.alice", "-m", "x"], None, {}),  # ambiguous
    (["--catalog", "{missing}", "message", "send", "robert", "--as", "h1.alice", "-m", "x"], None, {}),
    (["message", "send", "robert", "--as", "h1.alice", "-m", "x", "--"], None, {}),
]


def run(command: list[str], words: list[str], stdin: str | None, env: dict[str, str]) -> subprocess.CompletedProcess:
    data = stdin.encode("utf-8", "surrogateescape") if stdin is not None else b""
    return subprocess.run([*command, *words], input=data, capture_output=True, env=env, cwd=REPO, timeout=60)


def normalized(data: bytes, names: dict[str, str]) -> bytes:
    """``data`` with each generated message filename replaced by its order of appearance."""
    def name(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"<message {len(names)}>")

    return FILENAME.sub(name, data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")


def outcome(result: subprocess.CompletedProcess, catalog: Path, tree) -> tuple:
    names: dict[str, str] = {}
    files = {normalized(path.encode(), names): normalized(content, names) if content is not None else None
             for path, content in tree(catalog).items()}
    return result.returncode, normalized(result.stdout, names), normalized(result.stderr, names), files


def both_routes(bus_catalog: Path, words: list[str], stdin: str | None, extra: dict[str, str], tmp_path: Path,
                tree):
    outcomes, routes = [], []
    for index, command in enumerate(route_commands(tmp_path / "route")):
        copy = tmp_path / "run" / "catalog"  # one path for every route: errors name it
        shutil.rmtree(copy.parent, ignore_errors=True)
        shutil.copytree(bus_catalog, copy, symlinks=True)
        argv = [word.format(catalog=copy, missing=tmp_path / "missing") for word in words]
        result = run(command, argv, stdin, st2_env(copy, **extra))
        if index < 2:
            outcomes.append(outcome(result, copy, tree))
        else:
            routes.append((tmp_path / "route").read_text())
    return outcomes, routes[0]


@pytest.mark.parametrize(("route", "words", "stdin", "extra"),
                         [("fast", *case) for case in FAST] + [("click", *case) for case in FALLBACK])
def test_each_route_matches_the_click_command_byte_for_byte(bus_catalog: Path, tmp_path: Path, snapshot,
                                                            route, words, stdin, extra) -> None:
    """A recognized shape skips the click CLI; any other shape falls back to it unchanged."""
    (fast, clicked), taken = both_routes(bus_catalog, words, stdin, extra, tmp_path, snapshot)
    assert taken == route
    assert fast == clicked


def test_the_receipt_and_the_message_are_the_ones_pinned(bus_catalog: Path, tmp_path: Path) -> None:
    """The compared outputs are real sends: a JSON receipt for a message that sits in the inbox."""
    result = run([sys.executable, "-m", "st2"], ["message", "send", "robert", "--as", "h1.alice", "-m", "hello",
                                                 "--json"], None, st2_env(bus_catalog))
    assert result.returncode == 0 and result.stderr == b""
    receipt = json.loads(result.stdout)
    assert list(receipt) == ["recipient", "filename", "receiptId", "outcome"]
    assert (receipt["recipient"], receipt["outcome"]) == ("h1.bob", "created")
    inbox = bus_catalog / "agents" / "h1" / "bob" / "resources" / "inbox" / receipt["filename"]
    assert inbox.read_text().endswith("hello\n")


# A send over a catalog the bus's seat index (st2/bus/seat_index.py) proves imports no pathlib
# (issue 19 item 5): the bus computes with os.path on the click-free route's str root. Probed under
# -S with site-packages on PYTHONPATH, so a dev venv's editable finder (which imports pathlib at
# start-up) stays out while ckdl stays importable for the walk.
SETTLED_SEND = ("import sys, time\nreal = time.time_ns\n"
                "time.time_ns = lambda: real() + 10 * 10**9  # past the index's 2 s settle bound: it is stored\n"
                "from st2.entry import main\nraise SystemExit(main(sys.argv[1:]))\n")
MODULES_PROBE = ("import json, sys\nfrom st2.entry import main\nstatus = main(sys.argv[2:])\n"
                 "open(sys.argv[1], 'w').write(json.dumps([status, sorted(sys.modules)]))\n")
PATHLIB = ("pathlib", "urllib.parse", "ipaddress")


def test_a_send_the_seat_index_serves_imports_no_pathlib(bus_catalog: Path, tmp_path: Path) -> None:
    import sysconfig

    env = st2_env(bus_catalog, PYTHONPATH=f"{REPO}:{sysconfig.get_paths()['purelib']}")
    words = ["message", "send", "robert", "--as", "h1.alice", "-m", "hello"]
    report = tmp_path / "modules.json"

    def probed() -> list[str]:
        run([sys.executable, "-S", "-c", MODULES_PROBE, str(report)], words, None, env)
        status, modules = json.loads(report.read_text())
        assert status == 0 and "st2.bus.send" in modules and "st2.cli" not in modules
        return [name for name in PATHLIB if name in modules]

    # The non-firing twin first: no index yet, so the send walks the catalog (discovery's paths
    # are Paths) and the probe sees pathlib.
    assert "pathlib" in probed()
    assert run([sys.executable, "-c", SETTLED_SEND], words, None, env).returncode == 0
    assert probed() == []
