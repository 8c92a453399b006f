"""The reconcile pass asks admission (st2.accounts.admission) before it launches or relaunches the
agent task of a seat on a declared account: queued seats are reported and wake the loop at the
account's next slot, companions follow their agent, seats without an account are never queued, and
an operator's explicit start (a seat selected alone, an unpark) goes to the head of the queue."""

from __future__ import annotations

import sys
from pathlib import Path

if str(Path(__file__).parent) not in sys.path:   # the reconcile rules' fake world sits beside this file
    sys.path.append(str(Path(__file__).parent))

from test_reconcile_rules import CRASHY, World, names

import dataclasses
import json

import pytest

from st2.runtime import launch_record, layout
from st2.supervisor import park
from st2.supervisor.reconcile import Selection

ACCOUNT = 'catalog {\n    account "main" { relaunch spacing="10s" concurrency=1; }\n}\n'
SEAT = '    account "main"\n    argv "sleep" "600"\n    ding'


@pytest.fixture
def world(tmp_path: Path) -> World:
    """The reconcile rules' world, its fake backends recording the account a task runs on as the
    real ones do (a record without it reads as a seat to move to its account)."""
    made = World(tmp_path)
    for backend in (made.exec, made.pty):
        def launch(spec, original=backend.launch):
            record = dataclasses.replace(original(spec), account=spec.environment.get("ST2_ACCOUNT"))
            launch_record.write(made.scope, record)
            return record
        backend.launch = launch
    supervisor = made.supervisor

    def undrained():   # one pass's own queue; the in-pass drain has its own tests below
        reconciler = supervisor()
        reconciler.drain_seconds = 0
        return reconciler
    made.supervisor = undrained
    made.reconciler = undrained()
    return made


def declare(world: World, *identities: str, body: str = SEAT) -> None:
    (world.catalog / "catalog.kdl").write_text(ACCOUNT)
    for identity in identities:
        world.seat(identity, body)


def test_one_start_per_spacing_and_companions_follow_their_agent(world):
    declare(world, "a", "b", "c")
    first = world.run()
    assert names(first.launched) == ["h.a", "h.a.ding"] and first.queued == ["h.b", "h.c"]
    assert first.next_deadline == world.clock.monotonic() + 10.0
    assert "queued=2" in first.summary()
    world.clock.advance(9.999)
    assert world.run().launched == []
    world.clock.advance(0.001)
    second = world.run()
    assert names(second.launched) == ["h.b", "h.b.ding"] and second.queued == ["h.c"]


def test_a_relaunch_after_an_exit_is_admitted_too(world):
    declare(world, "a", "b")
    world.run()
    world.clock.advance(10)
    world.run()                                  # h.b started at t=10
    world.pty.exit("h.a")
    world.clock.advance(1)
    report = world.run()
    assert report.queued == ["h.a"] and report.next_deadline == world.clock.monotonic() + 9.0
    world.clock.advance(9)
    assert names(world.run().restarted) == ["h.a"]


def test_seats_without_an_account_are_never_queued(world):
    (world.catalog / "catalog.kdl").write_text(ACCOUNT)
    for identity in ("a", "b", "c"):
        world.seat(identity, '    argv "sleep" "600"\n    ding')
    report = world.run()
    assert names(report.launched) == ["h.a", "h.a.ding", "h.b", "h.b.ding", "h.c", "h.c.ding"]
    assert report.queued == [] and report.next_deadline is None
    assert not Path(layout.account_admission(world.scope.directory, "main")).exists()


def test_a_seat_selected_alone_goes_to_the_head_and_keeps_the_spacing(world):
    declare(world, "a", "b", "c")
    world.run()                                  # h.a starts; h.b then h.c wait
    operator = world.supervisor()                # `st2 up --agent c` after the fleet's supervisor stopped
    world.clock.advance(4)
    early = world.run(Selection(agent="c"), operator)
    assert early.launched == [] and early.queued == ["h.c"]
    waiting = json.loads(Path(layout.account_admission(world.scope.directory, "main")).read_text())["queue"]
    assert [(entry["runtimeId"], entry["explicit"]) for entry in waiting] == [("h.c", True)]
    world.clock.advance(6)
    assert names(world.run(Selection(agent="c"), operator).launched) == ["h.c", "h.c.ding"]
    fleet = world.supervisor()
    world.clock.advance(1)
    after = world.run(reconciler=fleet)          # the spacing counts from h.c's start
    assert after.launched == [] and after.queued == ["h.b"]


def test_an_unparked_seat_goes_to_the_head_of_its_account(world):
    declare(world, "a", body=CRASHY.replace("    argv", '    account "main"\n    argv'))
    world.seat("lead", '    argv "sleep" "600"')
    for _ in range(6):                           # it crash-loops (each relaunch admitted) until parked
        if world.reconciler.states.get("h.a") and world.reconciler.states["h.a"].phase.name == "PARKED":
            break
        if "h.a" in world.pty.alive:
            world.pty.exit("h.a")
        world.clock.advance(10)
        world.run()
    assert park.read(world.scope, "h.a").marker is not None
    declare(world, "p", "q")
    world.clock.advance(10)
    assert names(world.run().launched) == ["h.p", "h.p.ding"]   # h.q waits behind it
    park.request_unpark(world.scope, "h.a", world.clock.wall_ms())
    unparked = world.run()
    assert unparked.unparked == ["h.a"] and unparked.queued == ["h.a", "h.q"]
    world.clock.advance(10)
    report = world.run()
    assert names(report.restarted + report.launched) == ["h.a"] and report.queued == ["h.q"]


def test_st2_tasks_shows_a_queued_agent_task_with_its_account_place_and_start(world):
    from st2.supervisor.inventory import inventory, to_json

    declare(world, "a", "b", "c")
    world.run()
    rows = {row["runtimeId"]: row for row in inventory(world.location, world.scope)["tasks"]}
    starts_at = world.clock.wall_ms() + 10_000
    assert to_json(rows["h.b"]) == (
        '{"agent":"h.b","task":"agent","runtimeId":"h.b","kind":"pty","lifecycle":"service",'
        '"retired":false,"desiredState":"running","agentDesiredState":"running","agentDesiredStateReason":null,'
        '"runtime":{"state":"absent","pid":null,"createdAt":null,"generationId":null,"error":null},"parked":null,'
        '"admission":{"account":"main","position":1,"startsAt":%d}}' % starts_at)
    assert rows["h.c"]["admission"] == {"account": "main", "position": 2, "startsAt": starts_at + 10_000}
    assert rows["h.b.ding"]["admission"] is None and rows["h.a"]["admission"] is None   # companions, started seats


def test_a_pass_drains_its_queue_slot_by_slot_within_its_drain_budget(world):
    """A storm costs one pass per drain, not one per start: the pass that queued the seats waits
    for each slot and launches them, observing only them, for at most its drain budget."""
    declare(world, "a", "b", "c", "d")
    world.reconciler.drain_seconds = 25.0
    began = world.clock.monotonic()
    starts = []
    original = world.pty.launch
    world.pty.launch = lambda spec: (starts.append((spec.runtime_id, world.clock.monotonic() - began)), original(spec))[1]
    report = world.run()
    assert [(rid, round(at, 3)) for rid, at in starts] == [("h.a", 0.0), ("h.b", 10.0), ("h.c", 20.0)]
    assert report.queued == ["h.d"] and report.next_deadline == began + 30.0, "past the budget: the next pass"
    assert "h.a.ding" in names(report.launched) and "h.b.ding" not in names(report.launched), \
        "a drained seat's companions start with the next pass"
    world.clock.advance(10.0)
    assert names(world.run().launched) == ["h.b.ding", "h.c.ding", "h.d", "h.d.ding"]


def test_a_queued_stop_ends_the_drain(world):
    declare(world, "a", "b", "c")
    world.reconciler.drain_seconds = 60.0
    world.reconciler.interrupted = lambda: bool(world.pty.launched[1:])   # a stop arrives once b started
    report = world.run()
    assert names(report.launched) == ["h.a", "h.a.ding", "h.b"] and report.queued == ["h.c"]
