"""The reconcile pass in-process against real backends: derived companions, suspension,
retirement, holds and targeted passes."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pytest

from supervisor_support import Fleet, poll_for
from st2.catalog.location import CatalogLocation
from st2.base.clock import FakeClock
from st2.supervisor import holds, lowering
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.reconcile import Reconciler, Selection
from st2.process.identity import observe

pytestmark = pytest.mark.process

STAYING_DING = ["sh", "-c", "exec sleep 600"]


@pytest.fixture
def world(fleet, monkeypatch):
    monkeypatch.setenv("ST2_TRANSPORT", "setsid")
    monkeypatch.setattr(lowering, "st2_command", lambda: STAYING_DING)
    location = CatalogLocation(fleet.catalog, "h")
    clock = FakeClock()
    reconciler = Reconciler(location, clock=clock, scope=fleet.scope, output=io.StringIO(),
                            notify=lambda notice: None)

    def run(selection=Selection()):
        return reconciler.run_pass(read_catalog(location), selection)

    fleet.run = run
    fleet.reconciler_plan = lambda identity: next(plan for plan in read_catalog(location).plans
                                                  if plan.identity == identity)
    fleet.reconciler = reconciler
    fleet.clock = clock
    return fleet


COMPACT = '    argv "sleep" "600"\n    ding\n    stream "feed" { argv "sleep" "600"; }'


def test_a_fresh_compact_agent_launches_with_its_companions_in_one_pass(world):
    world.seat("a", COMPACT)
    report = world.run()
    assert sorted(item.split("[")[0] for item in report.launched) == ["h.a", "h.a.ding", "h.a.feed"]
    again = world.run()
    assert again.launched == [] and again.adopted == [] and sorted(again.running) == ["h.a", "h.a.ding", "h.a.feed"]


def test_a_new_supervisor_adopts_each_survivor_exactly_once(world):
    world.seat("a", COMPACT)
    world.run()
    before = world.running()
    fresh = Reconciler(CatalogLocation(world.catalog, "h"), scope=world.scope, output=io.StringIO())
    first = fresh.run_pass(read_catalog(CatalogLocation(world.catalog, "h")))
    second = fresh.run_pass(read_catalog(CatalogLocation(world.catalog, "h")))
    assert sorted(first.adopted) == ["h.a", "h.a.ding", "h.a.feed"] and first.launched == []
    assert second.adopted == [] and second.launched == []
    assert world.running() == before


def test_suspension_stops_the_agent_and_companions_but_keeps_a_keep_pinned_record(world):
    world.seat("a", COMPACT + '\n    exec "cache" { argv "sleep" "600"; keep #true; }')
    world.seat("b", '    argv "sleep" "600"')
    world.run()
    sibling = world.running()["h.b"]
    world.seat("a", '    desired-state "suspended" reason="maintenance"\n' + COMPACT
               + '\n    exec "cache" { argv "sleep" "600"; keep #true; }')
    report = world.run()
    assert sorted(report.stopped) == ["h.a", "h.a.cache", "h.a.ding", "h.a.feed"]
    assert sorted(world.running()) == ["h.b"] and world.running()["h.b"] == sibling
    assert world.scope.launch_record("h.a.cache").exists()          # keep-pinned dead record
    assert not world.scope.launch_record("h.a").exists()
    # Resuming is ordinary reconciliation.
    world.seat("a", COMPACT + '\n    exec "cache" { argv "sleep" "600"; keep #true; }')
    resumed = world.run()
    # The keep-pinned dead record is ordinary evidence again: its task is relaunched.
    relaunched = resumed.launched + resumed.restarted
    assert sorted(item.split("[")[0] for item in relaunched) == ["h.a", "h.a.cache", "h.a.ding", "h.a.feed"]
    assert [item.split("[")[0] for item in resumed.restarted] == ["h.a.cache"]


def test_retirement_stops_everything_and_removes_records_and_logs(world):
    world.seat("a", COMPACT)
    world.run()
    logs = world.catalog / "logs"
    assert (logs / "h.a.feed.log").exists()
    world.seat("a", '    desired-state "retired" reason="done"\n' + COMPACT)
    report = world.run()
    assert sorted(report.stopped) == ["h.a", "h.a.ding", "h.a.feed"]
    assert world.running() == {}
    assert not any(world.scope.tasks.iterdir())
    assert not (logs / "h.a.feed.log").exists() and not (logs / "h.a.ding.log").exists()


def test_retirement_removes_the_prior_log_generation_a_restart_kept(world):
    body = '    argv "sleep" "600"\n    exec "job" { argv "sh" "-c" "echo generation"; }'
    world.seat("a", body)
    logs = world.catalog / "logs"
    # The job exits at once and each pass relaunches it: the second launch keeps the first's log.
    assert poll_for(lambda: (world.run(), (logs / "h.a.job.log.1").exists())[1], timeout=20)
    assert poll_for(lambda: (logs / "h.a.job.log.1").read_text() == "generation\n")
    world.seat("a", '    desired-state "retired" reason="done"\n' + body)
    world.run()
    assert world.running() == {}
    assert not any(world.scope.tasks.iterdir())
    assert sorted(path.name for path in logs.iterdir() if path.name.startswith("h.a.job")) == []


def park_a_crashing_agent(world) -> dict:
    """Declare seat ``a`` (agent, DING, stream) whose agent crashes while ``crash`` exists, make it
    crash-loop into a park; return the companions that ran before."""
    world.seat("a", '    restart { attempts 1; interval "60s"; mode "fail"; }\n'
               '    argv "sh" "-c" "test -f ' + str(world.base / "crash") + ' && exit 3; exec sleep 600"\n'
               '    ding\n    stream "feed" { argv "sleep" "600"; }')
    world.run()
    companions = {rid: value for rid, value in world.running().items() if rid != "h.a"}
    (world.base / "crash").write_text("")
    pid = world.record("h.a").pid
    os.kill(pid, 9)
    assert poll_for(lambda: observe(pid) is None)
    # Exit 1 -> restart, which crashes at once (or cannot start while the dying tmux server still
    # answers): passes until the second exit inside the interval parks it.
    assert poll_for(lambda: (world.run(), world.reconciler.states["h.a"].phase.value == "parked")[1],
                    "the crash-looping agent to park", timeout=20)
    return companions


def test_a_parked_agent_stops_its_live_companions(world):
    assert sorted(park_a_crashing_agent(world)) == ["h.a.ding", "h.a.feed"]
    assert world.running() == {}, "companions of a parked agent must be stopped"


def test_a_crash_looping_stream_parks_on_its_own_and_never_claims_a_delivery_transport(world):
    world.seat("a", '    restart { attempts 1; interval "60s"; mode "fail"; }\n'
               '    argv "sleep" "600"\n    stream "feed" { argv "sh" "-c" "exit 3"; }')
    world.run()
    agent = world.running()["h.a"]
    assert poll_for(lambda: (world.run(), world.reconciler.states["h.a.feed"].phase.value == "parked")[1],
                    "the crash-looping stream to park", timeout=20)
    assert world.running() == {"h.a": agent}            # the agent untouched: same PID, same start
    assert world.reconciler.states["h.a"].phase.value != "parked"
    rows = {row["runtimeId"]: row for row in world.tasks()["tasks"]}
    # The stream is the seat's only companion: no DING task, no delivery transport claimed for it.
    assert sorted(rows) == ["h.a", "h.a.feed"]
    assert rows["h.a.feed"]["parked"] is not None and rows["h.a"]["parked"] is None
    assert [task.role.value for task in world.reconciler_plan("a").tasks] == ["agent", "stream"]


def test_unpark_restores_the_parked_agent_and_its_derived_ding_companion(world):
    park_a_crashing_agent(world)
    assert world.running() == {}
    (world.base / "crash").unlink()                       # the cause fixed
    result = world.st2("unpark", "h.a")
    assert result.returncode == 0, result.stderr
    assert poll_for(lambda: (world.run(), sorted(world.running()) == ["h.a", "h.a.ding", "h.a.feed"])[1],
                    "the agent and both companions back", timeout=20)
    assert not world.scope.park_marker("h.a").exists()


def test_a_held_agent_is_not_relaunched_and_its_companions_stop(world):
    world.seat("a", COMPACT)
    world.run()
    result = world.st2("down", "a")
    assert result.returncode == 0
    report = world.run()
    assert report.launched == [] and sorted(report.held) == ["h.a", "h.a.ding", "h.a.feed"]
    assert world.running() == {}
    holds.clear_all(world.scope)
    assert sorted(item.split("[")[0] for item in world.run().launched) == ["h.a", "h.a.ding", "h.a.feed"]


def test_a_targeted_pass_holds_a_missing_companion_without_broadening_to_its_agent(world):
    world.seat("a", COMPACT)
    report = world.run(Selection(task="h.a.ding"))
    assert report.launched == []
    assert world.running() == {}
    world.run(Selection(agent="a"))
    assert sorted(world.running()) == ["h.a", "h.a.ding", "h.a.feed"]
