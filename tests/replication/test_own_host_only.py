"""Each host's `st2 up` launches only its own host's seats, whatever replication delivers
(issue 21): two catalog copies on one machine, each supervised as its own host under its own
runtime state, with the other host's declarations, records and mail delivered into its copy and
the other host's subtree holding problems that are that host's to fix."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from replication_engine import Engine, clone_declarations
from support import run_st2, st2_env

pytestmark = pytest.mark.process

SEAT = 'agent "{identity}" {{\n    argv "sleep" "600"\n}}\n'


@pytest.fixture
def place():
    root = Path(tempfile.mkdtemp(prefix="st2r-", dir="/tmp"))  # short: sockets live below it
    yield root
    shutil.rmtree(root, ignore_errors=True)


def declare(catalog: Path, host: str, identity: str) -> None:
    seat = catalog / "agents" / host / identity
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (seat / "agent.kdl").write_text(SEAT.format(identity=identity))


def st2(catalog: Path, host: str, *args: str):
    state = catalog.parent / f"state-{host}"
    return run_st2(*args, "--host", host, env=st2_env(catalog, XDG_STATE_HOME=str(state)), timeout=60)


def running(catalog: Path, host: str) -> list[str]:
    inventory = json.loads(st2(catalog, host, "tasks", "--json").stdout)
    return sorted(task["runtimeId"] for task in inventory["tasks"] if task["runtime"]["state"] == "running")


@pytest.mark.parametrize("with_declarations", [False, True], ids=["declarations-by-configuration", "declarations-replicated"])
def test_each_supervisor_launches_only_its_own_hosts_seats(place: Path, with_declarations: bool) -> None:
    a, b = place / "a", place / "b"
    declare(a, "a", "one")
    declare(b, "b", "two")
    declare(b, "b", "three")
    engine = Engine(with_declarations=with_declarations)
    if with_declarations:
        for path in (*b.glob("agents/*/*/agent.kdl"),):
            engine.copy(b, a, str(path.relative_to(b)))
        engine.copy(a, b, "agents/a/one/agent.kdl")
    else:
        clone_declarations(a, b)
        clone_declarations(b, a)
    (b / "agents" / "b" / "two" / "status").write_text("busy\nv1 1788000000000\n")
    engine.sync_tree(b, a)
    # Problems in host b's subtree of a's copy are b's to fix: a broken declaration, a stray
    # file where a seat belongs, a seat name b's tooling allowed and discovery refuses.
    (a / "agents" / "b" / "three" / "agent.kdl").write_text('agent "three" {\n    argv\n')
    (a / "agents" / "b" / "notes.txt").write_text("not a seat\n")
    try:
        up_a = st2(a, "a", "up", "--once")
        assert up_a.returncode == 0, up_a.stderr
        assert "launched a.one[" in up_a.stderr and "b." not in up_a.stderr, up_a.stderr
        up_b = st2(b, "b", "up", "--once")
        assert up_b.returncode == 0, up_b.stderr
        assert "launched b.three[" in up_b.stderr and " b.two[" in up_b.stderr and "a.one" not in up_b.stderr
        assert running(a, "a") == ["a.one"]
        assert running(b, "b") == ["b.three", "b.two"]
        # Replication keeps delivering; a's next pass still launches nothing of b's.
        (b / "agents" / "b" / "two" / "resources" / "inbox" / "1788000000001-abcdef.md").write_text("---\nfrom: b.three\n---\nhi\n")
        engine.sync_tree(b, a)
        again = st2(a, "a", "up", "--once")
        assert again.returncode == 0 and "launched" not in again.stderr and "b." not in again.stderr, again.stderr
        assert running(a, "a") == ["a.one"]
        # The same stray file in a's own subtree is a's problem: reported, the pass fails.
        (a / "agents" / "a" / "notes.txt").write_text("not a seat\n")
        own = st2(a, "a", "up", "--once")
        assert own.returncode == 1 and "agents/a/notes.txt" in own.stderr, own.stderr
    finally:
        st2(a, "a", "down")
        st2(b, "b", "down")
