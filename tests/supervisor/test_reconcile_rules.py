"""The reconciler's adopt / launch / restart / park / hold rules against a fake backend: no
process, terminal or signal is touched, so each rule is a fast unit test on a FakeClock over a
real temp catalog and runtime scope. The process tier (test_reconcile.py, test_survival.py)
still proves that real tasks survive and are adopted."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from st2.catalog.location import CatalogLocation
from st2.base.clock import FakeClock
from st2.supervisor import holds, park
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.reconcile import Reconciler, Selection
from st2.supervisor.restart_policy import Phase
from st2.runtime import launch_record
from st2.supervisor.backends.backend import LaunchError, Observation, RuntimeState, TaskSpec
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope

HOST = "h"


class FakeBackend:
    """A backend whose processes are rows in a table. ``launch`` writes a real launch record, as
    the real backends do; tests flip a row to make a task exit, vanish or lose its PID."""

    def __init__(self, kind: str, scope: RuntimeScope, pids: list[int]) -> None:
        self.kind = kind
        self.scope = scope
        self.pids = pids                   # shared between both fakes, so PIDs never repeat
        self.alive: dict[str, tuple[int, RuntimeState]] = {}
        self.launched: list[str] = []
        self.killed: list[str] = []
        self.refusals: dict[str, str] = {}
        self.failing: set[str] = set()

    def admission_error(self, runtime_id: str) -> str | None:
        return self.refusals.get(runtime_id)

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        if spec.runtime_id in self.failing:
            raise LaunchError(f"{spec.runtime_id}: cannot start {spec.argv[0]!r}")
        self.pids.append(self.pids[-1] + 1)
        pid = self.pids[-1]
        record = LaunchRecord(
            runtime_id=spec.runtime_id, kind=self.kind, pid=pid, start_time=float(pid),
            created_at="2026-12-01T00:00:00Z", generation_id=f"{self.kind}-{pid}",
            argv_digest=launch_record.argv_digest(list(spec.argv)), launched_at_ms=0,
            supervisor_pid=os.getpid(),
            socket=str(self.scope.socket(spec.runtime_id)) if self.kind == "pty" else None,
            server_pid=pid + 100_000 if self.kind == "pty" else None,
        )
        launch_record.write(self.scope, record)
        self.alive[spec.runtime_id] = (pid, RuntimeState.RUNNING)
        self.launched.append(spec.runtime_id)
        return record

    def observe(self, record: LaunchRecord) -> Observation:
        pid, state = self.alive.get(record.runtime_id, (record.pid, RuntimeState.EXITED))
        if pid != record.pid:
            state = RuntimeState.EXITED
        if state is RuntimeState.INDETERMINATE:
            return Observation(record.runtime_id, state, record, error=f"pid {pid} now belongs to another process",
                               pid_reused=True)
        if state is RuntimeState.VANISHED:
            return Observation(record.runtime_id, state, record, error=f"pid {pid} alive, transport silent")
        return Observation(record.runtime_id, state, record)

    def kill(self, record: LaunchRecord) -> None:
        self.killed.append(record.runtime_id)
        self.alive.pop(record.runtime_id, None)

    def reap(self) -> set[int]:
        return set()

    def exit(self, runtime_id: str) -> None:
        pid, _ = self.alive[runtime_id]
        self.alive[runtime_id] = (pid, RuntimeState.EXITED)


class World:
    def __init__(self, base: Path) -> None:
        self.catalog = base / "c"
        (self.catalog / "agents" / HOST).mkdir(parents=True)
        self.location = CatalogLocation(self.catalog, HOST)
        self.scope = RuntimeScope(self.catalog, HOST, state_dir=base / "s")
        self.clock = FakeClock()
        pids = [40000]
        self.exec = FakeBackend("exec", self.scope, pids)
        self.pty = FakeBackend("pty", self.scope, pids)
        self.notices: list = []
        self.output = io.StringIO()
        self.reconciler = self.supervisor()

    def supervisor(self) -> Reconciler:
        """A fresh supervisor over the same scope and fake processes (a restarted `st2 up`)."""
        return Reconciler(self.location, clock=self.clock, scope=self.scope, output=self.output,
                          notify=self.notices.append, backends={"exec": self.exec, "pty": self.pty})

    def seat(self, identity: str, body: str) -> None:
        directory = self.catalog / "agents" / HOST / identity
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')

    def run(self, selection: Selection = Selection(), reconciler: Reconciler | None = None):
        return (reconciler or self.reconciler).run_pass(read_catalog(self.location), selection)

    def backend_of(self, runtime_id: str) -> FakeBackend:
        return self.pty if runtime_id in self.pty.alive else self.exec


@pytest.fixture
def world(tmp_path: Path, monkeypatch) -> World:
    return World(tmp_path)


def names(items: list[str]) -> list[str]:
    return sorted(item.split("[")[0] for item in items)


COMPACT = '    argv "sleep" "600"\n    ding\n    stream "feed" { argv "sleep" "600"; }'
CRASHY = '    restart { attempts 1; interval "60s"; mode "fail"; }\n    argv "sleep" "600"\n    supervisor "lead"'


# -- launch and adopt --------------------------------------------------------------------------

def test_launch_starts_only_what_has_no_live_generation(world):
    world.seat("a", COMPACT)
    first = world.run()
    assert names(first.launched) == ["h.a", "h.a.ding", "h.a.feed"]
    assert world.pty.launched == ["h.a"] and sorted(world.exec.launched) == ["h.a.ding", "h.a.feed"]
    second = world.run()
    assert (second.launched, second.adopted, sorted(second.running)) == ([], [], ["h.a", "h.a.ding", "h.a.feed"])


def test_a_new_supervisor_adopts_each_survivor_exactly_once_and_launches_nothing(world):
    world.seat("a", COMPACT)
    world.run()
    fresh = world.supervisor()
    first = world.run(reconciler=fresh)
    second = world.run(reconciler=fresh)
    assert sorted(first.adopted) == ["h.a", "h.a.ding", "h.a.feed"] and first.launched == []
    assert second.adopted == [] and second.launched == []
    assert world.pty.launched == ["h.a"]                      # still only the first generation
    assert {rid: state.phase for rid, state in fresh.states.items()} == {
        "h.a": Phase.RUNNING, "h.a.ding": Phase.RUNNING, "h.a.feed": Phase.RUNNING}
    assert world.output.getvalue().count("adopted h.a\n") == 1


def test_a_reused_pid_is_replaced_never_adopted_nor_killed(world):
    world.seat("a", '    argv "sleep" "600"')
    world.run()
    pid, _ = world.pty.alive["h.a"]
    world.pty.alive["h.a"] = (pid, RuntimeState.INDETERMINATE)
    fresh = world.supervisor()
    report = world.run(reconciler=fresh)
    assert report.adopted == [] and names(report.launched + report.restarted) == ["h.a"]
    assert world.pty.killed == []
    assert any("not adopted" in error for error in report.errors)


@pytest.mark.parametrize("state", [RuntimeState.VANISHED])
def test_untrustworthy_evidence_holds_the_task_instead_of_launching(world, state):
    world.seat("a", '    argv "sleep" "600"\n    ding')
    world.run()
    pid, _ = world.pty.alive["h.a"]
    world.pty.alive["h.a"] = (pid, state)
    report = world.run(reconciler=world.supervisor())
    assert report.launched == [] and world.pty.launched == ["h.a"]
    assert any(error.startswith("h.a: holding, not launching") for error in report.errors)
    assert "h.a.ding" in world.exec.killed                 # a companion runs only beside a running agent


def test_a_malformed_launch_record_holds_the_task(world):
    world.seat("a", '    argv "sleep" "600"')
    world.scope.ensure()
    world.scope.launch_record("h.a").write_text("{not json")
    report = world.run()
    assert report.launched == [] and world.pty.launched == []
    assert any("holding, not launching" in error for error in report.errors)


# -- restart -----------------------------------------------------------------------------------

def test_an_exit_is_restarted_after_the_delay(world):
    world.seat("a", '    restart { attempts 3; interval "60s"; delay "5s"; }\n    argv "sleep" "600"')
    world.run()
    world.pty.exit("h.a")
    waiting = world.run()
    assert waiting.launched == waiting.restarted == [] and waiting.next_deadline == pytest.approx(world.clock.monotonic() + 5)
    world.clock.advance(5)
    assert names(world.run().restarted) == ["h.a"]


def test_a_failed_launch_counts_as_an_exit(world):
    world.seat("a", CRASHY)
    world.pty.failing.add("h.a")
    world.run()
    assert world.reconciler.states["h.a"].phase is Phase.WAITING
    world.run()
    assert world.reconciler.states["h.a"].phase is Phase.PARKED


# -- park ----------------------------------------------------------------------------------------

def test_fail_mode_parks_advises_unpark_tells_the_supervisor_once_and_unpark_recovers(world):
    world.seat("a", CRASHY)
    world.seat("lead", '    argv "sleep" "600"')
    world.run()
    for _ in range(2):
        world.pty.exit("h.a")
        world.run()
    report = world.run()
    assert world.reconciler.states["h.a"].phase is Phase.PARKED and "h.a" not in report.running
    marker = park.read(world.scope, "h.a").marker
    assert marker.recoverable and marker.recovery_argv()[:2] == ["st2", "unpark"]
    assert "Recover it with: st2 unpark" in world.output.getvalue()
    assert [(notice.runtime_id, notice.recovery) for notice in world.notices] == [("h.a", marker.recovery_argv())]
    park.request_unpark(world.scope, "h.a", world.clock.wall_ms())
    recovered = world.run()
    assert recovered.unparked == ["h.a"] and names(recovered.launched + recovered.restarted) == ["h.a"]
    assert park.read(world.scope, "h.a").belief is park.Belief.NOT_PARKED


def test_a_structurally_unbindable_task_is_parked_without_advising_unpark(world):
    world.seat("a", '    argv "sleep" "600"\n    ding\n    supervisor "lead"')
    world.seat("lead", '    argv "sleep" "600"')
    world.pty.refusals["h.a"] = "session socket path /long/path is 130 bytes; ... by 27 bytes"
    first = world.run()
    second = world.run()
    assert world.pty.launched == ["h.lead"] and "h.a.ding" not in world.exec.launched
    assert first.parked == ["h.a"] and second.parked == []
    marker = park.read(world.scope, "h.a").marker
    assert (marker.recoverable, marker.recovery_argv()) == (False, None)
    assert "by 27 bytes" in marker.reason
    assert "st2 unpark" not in world.output.getvalue()
    assert [(notice.runtime_id, notice.recovery) for notice in world.notices] == [("h.a", None)]
    assert "st2 unpark" not in world.notices[0].body and "by 27 bytes" in world.notices[0].body
    # Once the path can be bound (a shorter pty root), the park lifts and the task launches.
    del world.pty.refusals["h.a"]
    lifted = world.run()
    assert lifted.unparked == ["h.a"] and names(lifted.launched) == ["h.a", "h.a.ding"]
    assert park.read(world.scope, "h.a").belief is park.Belief.NOT_PARKED


def test_a_parked_agent_stops_its_companions(world):
    world.seat("a", CRASHY + '\n    ding')
    world.run()
    for _ in range(2):
        world.pty.exit("h.a")
        world.run()
    assert world.reconciler.states["h.a"].phase is Phase.PARKED
    assert "h.a.ding" in world.exec.killed and "h.a.ding" not in world.exec.alive


# -- hold and stop -----------------------------------------------------------------------------

def test_a_held_task_is_not_relaunched_and_its_companions_stop(world):
    world.seat("a", COMPACT)
    world.run()
    for rid in ("h.a", "h.a.ding", "h.a.feed"):
        holds.hold(world.scope, rid)
    world.pty.exit("h.a")
    report = world.run()
    assert sorted(report.held) == ["h.a", "h.a.ding", "h.a.feed"] and report.launched == []
    assert sorted(world.exec.killed) == ["h.a.ding", "h.a.feed"]
    holds.clear_all(world.scope)
    released = world.run()
    assert names(released.launched + released.restarted) == ["h.a", "h.a.ding", "h.a.feed"]


def test_suspension_stops_every_task_and_retirement_removes_the_records(world):
    world.seat("a", COMPACT)
    world.run()
    world.seat("a", '    desired-state "suspended" reason="w"\n' + COMPACT)
    report = world.run()
    assert sorted(report.stopped) == ["h.a", "h.a.ding", "h.a.feed"] and report.launched == []
    world.seat("a", '    desired-state "running"\n' + COMPACT)
    world.run()
    world.seat("a", '    desired-state "retired" reason="done"\n' + COMPACT)
    world.run()
    assert launch_record.recorded_ids(world.scope) == []


def test_a_targeted_pass_touches_only_its_task(world):
    world.seat("a", COMPACT)
    world.seat("b", '    argv "sleep" "600"')
    report = world.run(Selection(agent="b"))
    assert names(report.launched) == ["h.b"]
    assert world.run(Selection(task="h.a.ding")).launched == []   # its agent is not running


def test_a_seat_whose_declaration_does_not_load_is_left_alone(world):
    world.seat("a", '    argv "sleep" "600"')
    world.run()
    (world.catalog / "agents" / HOST / "a" / "agent.kdl").write_text('agent "a" {\n    argv\n')
    world.pty.exit("h.a")
    report = world.run()
    assert report.launched == [] and world.pty.killed == [] and report.errors



def test_a_provider_runtime_whose_declared_argv_changed_is_replaced_in_one_pass_without_spending_its_budget(world):
    provider = world.catalog / "catalog.kdl"
    provider.write_text('catalog {\n    resource-provider "probe" { argv "/opt/probe-1" }\n}\n')
    world.seat("w", '    argv "sleep" "600"\n    restart { attempts 0; interval "60s"; mode "fail"; }\n'
                    '    resource "r" uri="probe:x"')
    rid = "h.w.resource-probe"
    world.run()
    world.run()
    first = launch_record.read(world.scope, rid)
    assert world.exec.launched == [rid] and world.exec.killed == []    # the same argv: launched once, kept
    provider.write_text('catalog {\n    resource-provider "probe" { argv "/opt/probe-2" }\n}\n')
    report = world.run()
    second = launch_record.read(world.scope, rid)
    assert world.exec.killed == [rid] and world.exec.launched == [rid, rid]
    assert second.pid != first.pid and second.argv_digest == launch_record.argv_digest(["/opt/probe-2"])
    assert report.stopped == [rid] and report.launched == [f"{rid}[{second.pid}]"]
    assert f"replacing {rid}[{first.pid}]: its declared argv changed" in world.output.getvalue()
    # No exit was counted: with no attempts left in fail mode, one counted exit would park it.
    assert world.reconciler.states[rid].phase is Phase.RUNNING and park.read(world.scope, rid).marker is None
    world.run()
    assert world.exec.killed == [rid] and world.exec.launched == [rid, rid]   # settled: nothing more


def test_a_changed_argv_never_replaces_a_running_agent_or_its_own_tasks(world):
    world.seat("w", '    argv "sleep" "600"\n    exec "worker" { argv "sleep" "600"; }')
    world.run()
    assert sorted(world.pty.launched + world.exec.launched) == ["h.w", "h.w.worker"]
    world.seat("w", '    argv "sleep" "700"\n    exec "worker" { argv "sleep" "700"; }')
    world.run()
    assert world.exec.killed == [] and world.pty.killed == []
    assert sorted(world.pty.launched + world.exec.launched) == ["h.w", "h.w.worker"]


# -- adopt-only ----------------------------------------------------------------------------------

SIDE = '    exec "side" { argv "sleep" "600"; lifecycle "adopt-only"; }'


def start_by_hand(world, runtime_id: str) -> None:
    """A generation st2 did not launch: the backend writes its launch record as st2 would."""
    world.exec.launch(TaskSpec(runtime_id, "exec", ("sleep", "600")))


def test_an_adopt_only_task_is_never_launched_but_a_live_generation_is_adopted_once(world):
    world.seat("a", '    argv "sleep" "600"\n' + SIDE)
    first = world.run()
    assert names(first.launched) == ["h.a"] and world.exec.launched == []
    assert world.reconciler.states["h.a.side"].phase is Phase.DOWN and "h.a.side" not in first.running
    start_by_hand(world, "h.a.side")
    second = world.run()
    third = world.run()
    assert (second.adopted, second.launched) == (["h.a.side"], []) and "h.a.side" in second.running
    assert (third.adopted, third.launched) == ([], []) and "h.a.side" in third.running
    fresh = world.supervisor()                                  # a restarted `st2 up` adopts it once too
    assert sorted(world.run(reconciler=fresh).adopted) == ["h.a", "h.a.side"]
    assert world.run(reconciler=fresh).adopted == []
    assert world.exec.launched == ["h.a.side"]                  # only the hand-started generation


def test_a_dead_adopt_only_task_stays_down_without_a_park_or_a_crash_count(world):
    world.seat("lead", '    argv "sleep" "600"')
    world.seat("a", CRASHY + '\n' + SIDE)                      # the seat's policy: one exit per minute, then park
    start_by_hand(world, "h.a.side")
    assert world.run().adopted == ["h.a.side"]
    world.exec.exit("h.a.side")
    for _ in range(4):                                          # well past a fail-mode budget of one
        report = world.run()
        world.clock.advance(1)
        assert report.launched == report.restarted == report.parked == [] and "h.a.side" not in report.running
    assert world.exec.launched == ["h.a.side"]
    state = world.reconciler.states["h.a.side"]
    assert (state.phase, state.exits, state.not_before) == (Phase.DOWN, (), None)
    assert park.read(world.scope, "h.a.side").marker is None and world.notices == []
    assert launch_record.read(world.scope, "h.a.side") is not None   # the dead record stays as evidence


def test_suspend_then_resume_keeps_the_adopt_only_and_keep_policies(world):
    cache = '    exec "cache" { argv "sleep" "600"; keep #true; }'
    body = '    argv "sleep" "600"\n' + cache + '\n' + SIDE
    world.seat("a", body)
    start_by_hand(world, "h.a.side")
    started = world.run()
    assert names(started.launched) == ["h.a", "h.a.cache"] and started.adopted == ["h.a.side"]
    world.seat("a", '    desired-state "suspended" reason="w"\n' + body)
    suspended = world.run()
    assert sorted(suspended.stopped) == ["h.a", "h.a.cache", "h.a.side"]
    assert launch_record.recorded_ids(world.scope) == ["h.a.cache"]      # only the keep-pinned dead record
    world.seat("a", body)
    resumed = world.run()
    # The keep-pinned task is ordinary evidence again and relaunches; the adopt-only one stays down.
    assert names(resumed.launched) == ["h.a"] and names(resumed.restarted) == ["h.a.cache"]
    assert world.exec.launched == ["h.a.side", "h.a.cache", "h.a.cache"]
    assert world.reconciler.states["h.a.side"].phase is Phase.DOWN and resumed.parked == []
    assert world.run().launched == []
