"""Retirement and suspension health, parked and down tasks, supervisor presence."""

from __future__ import annotations

import pytest

from supervisor_support import poll_for
from st2.doctor.health import supervisor_health, task_health
from st2.supervisor.backends.backend import RuntimeState, TaskSpec
from st2.supervisor.backends.exec_backend import ExecBackend
from st2.supervisor.backends.process_group import reap_children


def lines(fleet):
    return [finding.line() for finding in task_health(fleet.catalog, "h", 0, scope=fleet.scope)]


def live_record(fleet, runtime_id):
    backend = ExecBackend(fleet.scope, fleet.catalog / "logs")
    return backend.launch(TaskSpec(runtime_id, "exec", ("sleep", "600")))


def dead_record(fleet, runtime_id):
    backend = ExecBackend(fleet.scope, fleet.catalog / "logs")
    record = backend.launch(TaskSpec(runtime_id, "exec", ("true",)))
    assert poll_for(lambda: (reap_children() or True) and backend.observe(record).state is RuntimeState.EXITED)
    return record


SEAT = '    argv "sleep" "600"\n    exec "cache" { argv "sleep" "600"; keep #true; }\n    exec "job" { argv "sleep" "600"; }'


def test_retired_declaration_is_healthy_when_tasks_and_presence_are_absent(fleet):
    fleet.seat("old", '    desired-state "retired" reason="done"\n' + SEAT)
    assert lines(fleet) == []


@pytest.mark.process
def test_retired_declaration_is_unhealthy_while_a_declared_task_is_alive(fleet):
    fleet.seat("old", '    desired-state "retired" reason="done"\n' + SEAT)
    live_record(fleet, "h.old.job")
    assert lines(fleet) == ["failure: h.old: retirement-incomplete: h.old.job: retired, but alive; "
                            "retirement is complete only when every task record is gone"]


@pytest.mark.process
def test_retired_declaration_is_unhealthy_while_a_dead_task_record_remains(fleet):
    fleet.seat("old", '    desired-state "retired" reason="done"\n' + SEAT)
    dead_record(fleet, "h.old.cache")                 # even keep-pinned
    assert lines(fleet) == ["failure: h.old: retirement-incomplete: h.old.cache: retired, but a dead record "
                            "remains; retirement is complete only when every task record is gone"]


def test_suspended_declaration_is_healthy_when_tasks_are_absent_without_presence(fleet):
    fleet.seat("idle", '    desired-state "suspended" reason="later"\n' + SEAT)
    assert lines(fleet) == []


@pytest.mark.process
def test_suspended_declaration_distinguishes_live_dead_keep_and_dead_nonkeep(fleet):
    fleet.seat("idle", '    desired-state "suspended" reason="later"\n' + SEAT)
    dead_record(fleet, "h.idle.cache")                # dead, keep-pinned: fine
    assert lines(fleet) == []
    dead_record(fleet, "h.idle.job")                  # dead, not keep: collection still owed
    assert lines(fleet) == ["failure: h.idle: suspension-incomplete: h.idle.job: suspended, and a dead "
                            "record that is not keep-pinned remains"]
    live_record(fleet, "h.idle.cache")                # live: never fine
    assert "failure: h.idle: suspension-incomplete: h.idle.cache: suspended, but still alive" in lines(fleet)


@pytest.mark.process
def test_a_running_seat_reports_down_and_parked_tasks_and_is_healthy_when_running(fleet):
    fleet.seat("lead", '    argv "sleep" "600"')
    assert lines(fleet) == ["failure: h.lead: task-down: h.lead: absent, not running"]
    assert [f.line() for f in supervisor_health(fleet.catalog, "h", 0, scope=fleet.scope)] == [
        f"advisory: supervisor: supervisor-running: no `st2 up` is running for {fleet.catalog} on h"]
    assert supervisor_health(fleet.catalog, "h", 0, require=True, scope=fleet.scope)[0].severity.value == "failure"
    fleet.up("--interval", "60s")
    assert poll_for(lambda: "h.lead" in fleet.running(), timeout=20)
    assert poll_for(lambda: supervisor_health(fleet.catalog, "h", 0, scope=fleet.scope) == [])
    assert lines(fleet) == []


@pytest.mark.process
def test_a_down_adopt_only_task_is_an_advisory_not_a_failure(fleet):
    fleet.seat("lead", '    argv "sleep" "600"\n    exec "side" { argv "sleep" "600"; lifecycle "adopt-only"; }')
    live_record(fleet, "h.lead")
    advice = ("advisory: h.lead: task-down: h.lead.side: {}, not running; st2 never starts an adopt-only task: "
              "start it yourself and the next pass adopts it")
    assert lines(fleet) == [advice.format("absent")]
    dead_record(fleet, "h.lead.side")
    assert lines(fleet) == [advice.format("exited")]
    live_record(fleet, "h.lead.side")
    assert lines(fleet) == []
