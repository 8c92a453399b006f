"""Inventory evidence rules that need no live process."""

from __future__ import annotations

import json

import pytest
from st2.catalog.location import CatalogLocation
from st2.supervisor import inventory as inventory_module
from st2.supervisor.catalog_view import read_catalog


def test_declarations_that_change_while_observed_make_the_inventory_incomplete(fleet, monkeypatch):
    fleet.seat("alpha", '    argv "sleep" "600"')
    location = CatalogLocation(fleet.catalog, "h")
    calls = []

    def drifting(where):
        calls.append(where)
        if len(calls) == 2:
            fleet.seat("alpha", '    desired-state "suspended" reason="drift"\n    argv "sleep" "600"')
        return read_catalog(where)

    monkeypatch.setattr(inventory_module, "read_catalog", drifting)
    envelope = inventory_module.inventory(location, scope=fleet.scope)
    assert envelope["complete"] is False
    assert envelope["errors"] == ["declarations changed while the inventory was observed; observe again"]


def test_an_unchanged_catalog_observed_twice_is_complete(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"')
    envelope = inventory_module.inventory(CatalogLocation(fleet.catalog, "h"), scope=fleet.scope)
    assert envelope["complete"] is True and envelope["errors"] == []


def test_a_runtime_id_declared_twice_makes_the_inventory_incomplete(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"\n    exec "job" { id "h.shared"; argv "true"; }')
    fleet.seat("beta", '    argv "sleep" "600"\n    exec "job" { id "h.shared"; argv "true"; }')
    envelope = inventory_module.inventory(CatalogLocation(fleet.catalog, "h"), scope=fleet.scope)
    assert envelope["complete"] is False
    assert "duplicate runtime id 'h.shared' is declared by h.alpha/job, h.beta/job" in envelope["errors"]


@pytest.mark.process
def test_the_supervisor_leaves_seats_that_claim_one_runtime_id_alone(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"\n    exec "job" { id "h.shared"; argv "sleep" "600"; }')
    fleet.seat("beta", '    argv "sleep" "600"\n    exec "job" { id "h.shared"; argv "sleep" "600"; }')
    fleet.seat("gamma", '    argv "sleep" "600"')
    result = fleet.st2("up", "--once")
    assert result.returncode == 1
    assert "h.alpha: runtime id 'h.shared' is also declared by h.beta; leaving the seat alone" in result.stderr
    assert sorted(fleet.running()) == ["h.gamma"]


@pytest.mark.process
@pytest.mark.parametrize("loss", ["deleted", "broken"])
def test_a_task_whose_declaration_is_lost_while_running_is_listed_as_an_orphan_with_its_stop(fleet, loss):
    seat = fleet.seat("alpha", '    argv "sleep" "600"')
    fleet.seat("gamma", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    pid = fleet.record("h.alpha").pid
    if loss == "deleted":
        (seat / "agent.kdl").unlink()
    else:
        (seat / "agent.kdl").write_text('agent "alpha" {\n    argv "sleep" {\n')
    stop = f"st2 down --catalog {fleet.catalog} --host h h.alpha"
    line = f"orphan task h.alpha (pid {pid}) is running but no loadable declaration claims it (deleted or broken); stop it with: {stop}"
    tasks = fleet.st2("tasks")
    assert tasks.returncode == 1 and f"incomplete: {line}" in tasks.stderr, tasks.stderr
    doctor = fleet.st2("doctor")
    assert line in doctor.stdout + doctor.stderr
    assert "h.alpha" in fleet.running()  # still running: only st2 down kills
    down = fleet.st2(*stop.split()[1:])
    assert down.returncode == 0 and "stopped h.alpha" in down.stdout, down
    assert "h.alpha" not in fleet.running() and "h.gamma" in fleet.running()
    assert "orphan" not in fleet.st2("tasks").stderr


@pytest.mark.process
def test_a_declared_running_task_is_no_orphan(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    tasks = fleet.st2("tasks")
    assert tasks.returncode == 0 and "orphan" not in tasks.stderr
    assert "orphan" not in fleet.st2("doctor").stdout


@pytest.mark.process
@pytest.mark.parametrize("marker", [
    b"{not json",                                                                       # malformed
    b'{"schema":"st2.park-marker.v1","runtimeId":"h.alpha","catalog":"/another/catalog","host":"h",'
    b'"supervisorPid":1,"supervisorStartTime":0,"parkedAtMs":1,"reason":"x","attempts":1}\n',   # another scope's
])
def test_an_unbelievable_park_marker_makes_the_inventory_incomplete(fleet, marker):
    fleet.seat("alpha", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    assert fleet.tasks()["complete"] is True
    path = fleet.scope.park_marker("h.alpha")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(marker)
    result = fleet.st2("tasks", "--json")
    inventory = json.loads(result.stdout)
    assert result.returncode != 0 and inventory["complete"] is False
    assert any("park marker of h.alpha" in error for error in inventory["errors"]), inventory["errors"]
    [row] = [row for row in inventory["tasks"] if row["runtimeId"] == "h.alpha"]
    assert row["parked"] is None and row["runtime"]["state"] == "running"   # the runtime stays truthful
    path.unlink()
    assert fleet.tasks()["complete"] is True
