"""Moving a seat between accounts (st2.accounts.placement, the supervisor's `_moved`): against a fake
backend over a real temp catalog and scope, so each rule is a fast unit test. A running agent task
launched on another account than its declaration's is relaunched there — a plain seat at once, a
harness seat only at an idle boundary; a failover account stands in while the seat's own is a
fresh PAUSE."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.catalog.location import CatalogLocation
from st2.records import harness_state
from st2.runtime import launch_record
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope
from st2.supervisor.backends.backend import Observation, RuntimeState, TaskSpec
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.reconcile import Reconciler

HOST = "h"


class Backend:
    """Processes as rows; ``launch`` writes a real launch record naming the task's account."""

    def __init__(self, kind: str, scope: RuntimeScope, pids: list[int]) -> None:
        self.kind, self.scope, self.pids = kind, scope, pids
        self.alive: dict[str, int] = {}
        self.launched: list[tuple[str, str | None]] = []
        self.killed: list[str] = []

    def admission_error(self, runtime_id: str) -> str | None:
        return None

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        self.pids.append(self.pids[-1] + 1)
        pid = self.pids[-1]
        record = LaunchRecord(
            runtime_id=spec.runtime_id, kind=self.kind, pid=pid, start_time=float(pid),
            created_at="2026-12-01T00:00:00Z", generation_id=f"{self.kind}-{pid}",
            argv_digest=launch_record.argv_digest(list(spec.argv)), launched_at_ms=0, supervisor_pid=os.getpid(),
            socket=str(self.scope.socket(spec.runtime_id)) if self.kind == "pty" else None,
            server_pid=pid + 100_000 if self.kind == "pty" else None, account=spec.environment.get("ST2_ACCOUNT"))
        launch_record.write(self.scope, record)
        self.alive[spec.runtime_id] = pid
        self.launched.append((spec.runtime_id, spec.environment.get("CLAUDE_CONFIG_DIR")))
        return record

    def observe(self, record: LaunchRecord) -> Observation:
        state = RuntimeState.RUNNING if self.alive.get(record.runtime_id) == record.pid else RuntimeState.EXITED
        return Observation(record.runtime_id, state, record)

    def kill(self, record: LaunchRecord) -> None:
        self.killed.append(record.runtime_id)
        self.alive.pop(record.runtime_id, None)

    def reap(self) -> set[int]:
        return set()


CATALOG = '''catalog {{
    account "a" {{ config-dir claude="{root}/claude-a"; DELEGATION_KIT_USAGE_FILE "{root}/a.txt"; failover "b" }}
    account "b" {{ config-dir claude="{root}/claude-b"; DELEGATION_KIT_USAGE_FILE "{root}/b.txt" }}
}}
'''


class World:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.catalog = base / "c"
        (self.catalog / "agents" / HOST).mkdir(parents=True)
        (self.catalog / "catalog.kdl").write_text(CATALOG.format(root=base))
        self.location = CatalogLocation(self.catalog, HOST)
        self.scope = RuntimeScope(self.catalog, HOST, state_dir=base / "s")
        pids = [40000]
        self.exec, self.pty = Backend("exec", self.scope, pids), Backend("pty", self.scope, pids)
        self.output = io.StringIO()
        self.clock = FakeClock(int(time.time() * 1000))
        self.reconciler = Reconciler(self.location, clock=self.clock, scope=self.scope, output=self.output,
                                     notify=lambda notice: None, backends={"exec": self.exec, "pty": self.pty})

    def seat(self, identity: str, body: str) -> Path:
        directory = self.catalog / "agents" / HOST / identity
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')
        return directory

    def run(self):
        self.clock.advance(5.0)   # past the accounts' relaunch spacing (st2.accounts.admission)
        return self.reconciler.run_pass(read_catalog(self.location))

    def account_of(self, runtime_id: str) -> str | None:
        return launch_record.read(self.scope, runtime_id).account

    def usage(self, account: str, percent: int) -> None:
        now = int(time.time())
        (self.base / f"{account}.txt").write_text(
            f"five_hour_used_pct={percent}\nfive_hour_resets_at={now + 3600}\nupdated_at={now}\n")


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_a_plain_seat_moved_to_another_account_is_relaunched_on_it_at_once(world: World) -> None:
    world.seat("p", '    argv "sleep" "100"\n    account "a"')
    world.run()
    assert world.account_of("h.p") == "a"
    world.seat("p", '    argv "sleep" "100"\n    account "b"')
    report = world.run()
    assert world.pty.killed == ["h.p"] and "h.p" in report.stopped
    assert world.account_of("h.p") == "b"
    world.run()
    assert world.pty.killed == ["h.p"], "a seat on its account is left alone"


@pytest.mark.process  # lowering a claude block probes the harness build
def test_a_harness_seat_moves_only_at_an_idle_boundary(world: World) -> None:
    directory = world.seat("c", '    claude {\n    }\n    account "a"')
    world.run()
    assert world.pty.launched == [("h.c", str(world.base / "claude-a"))]
    writer = harness_state.Writer(directory, "h.c", "claude", world.clock, pty_session="s")
    writer.observe("active")
    world.seat("c", '    claude {\n    }\n    account "b"')
    for _ in range(2):
        world.run()
    assert world.pty.killed == [] and world.account_of("h.c") == "a", "never mid-turn"
    assert "h.c moves from account a to b at its next idle boundary" in world.output.getvalue()
    writer.observe("idle", blocked_on="human", ask="permission")
    world.run()
    assert world.pty.killed == [], "a seat waiting on a human is not at a boundary"
    writer.observe("idle")
    world.run()
    assert world.pty.killed == ["h.c"]
    assert world.pty.launched[-1] == ("h.c", str(world.base / "claude-b"))
    assert world.account_of("h.c") == "b"


def test_a_paused_account_fails_over_and_its_seats_come_back_when_it_recovers(world: World) -> None:
    world.seat("p", '    argv "sleep" "100"\n    account "a"')
    world.usage("a", 10)
    world.usage("b", 10)
    world.run()
    assert world.account_of("h.p") == "a"
    world.usage("a", 95)
    world.run()
    assert world.account_of("h.p") == "b", "its own account PAUSEd: the failover stands in"
    world.usage("a", 10)
    world.run()
    assert world.account_of("h.p") == "a", "its own account recovered: the seat is back"
    world.usage("a", 95)
    world.usage("b", 97)
    world.run()
    assert world.account_of("h.p") == "a", "a failover stands in only while it is not paused itself"


@pytest.mark.process  # lowering a pi block probes the harness build
def test_a_seat_whose_harness_cannot_carry_its_session_starts_fresh_and_says_which_session_was_lost(world: World) -> None:
    from st2.records import driver_diagnostic
    from st2.roster.row import lost_session
    from st2.runtime import resume
    from st2.runtime import resumable_session as records

    directory = world.seat("q", '    pi {\n    }\n    account "a"')
    world.run()
    store = records.SessionStore.beside(world.scope.directory)
    session = "/home/u/.pi/agent/sessions/--work--/2026-12-05_abc.jsonl"
    store.ensure()
    records.write(store, records.SessionRecord("h.q", "h.q", "pi", "t1", "fresh", session, None, (), 1))
    harness_state.Writer(directory, "h.q", "pi", world.clock, pty_session="s").observe("idle")
    world.seat("q", '    pi {\n    }\n    account "b"')
    report = world.run()
    assert world.account_of("h.q") == "b"
    line = (f"h.q: its pi session {session} cannot follow it to the new account (pi: carrying a conversation to "
            "another config location was not proved in the lab; the seat starts a fresh session); the session is "
            "lost and the seat starts fresh")
    assert line in world.output.getvalue() and line in report.errors
    assert records.read(store, "h.q").lost_ids() == {session}
    diagnostic = driver_diagnostic.read_file(directory / driver_diagnostic.RECORD_NAME, world.clock.wall_ms())
    assert (diagnostic.driver, diagnostic.stage, diagnostic.reason) == ("pi", "resume", "resumeRefused")
    # The relaunched incarnation starts fresh, labelled a fallback: Doctor's session-lost names the id.
    binding = resume.begin(store, "h.q", "h.q", "pi", "t2", "last", world.clock, directory)
    assert (binding.start, binding.resume_id) == (resume.Start.FALLBACK, None)
    assert lost_session(records.read(store, "h.q")) == session
    assert driver_diagnostic.read_file(directory / driver_diagnostic.RECORD_NAME, world.clock.wall_ms()).stage == "resume"
