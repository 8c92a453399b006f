"""`st2 catalog graph --json`: supervisor edges, streams and resources with the runtime rows, one
tombstone row per archived seat, and an unexplained archive entry making the graph incomplete."""

from __future__ import annotations

import json

import pytest

from support import compact

pytestmark = pytest.mark.process

NOW = 1_788_000_000_000


def graph(fleet):
    result = fleet.st2("catalog", "graph", "--json")
    return result.returncode, json.loads(result.stdout)


def test_the_graph_carries_edges_streams_resources_runtime_and_tombstones(fleet):
    fleet.seat("lead", '    argv "sleep" "600"')
    fleet.seat("worker", '    supervisor "lead"\n    argv "sleep" "600"\n    stream "ci" {}\n'
                         '    resource "spec" uri="file:///spec.md"')
    fleet.seat("gone", '    desired-state "retired" reason="done"\n    argv "true"')
    fleet.env["ST2_CLOCK_WALL_MS"] = str(NOW)
    assert fleet.st2("catalog", "archive", "--identity", "gone").returncode == 0
    status, envelope = graph(fleet)
    assert status == 0, envelope["issues"]
    assert list(envelope) == ["schema", "complete", "roots", "agents", "archived", "issues"]
    assert envelope["schema"] == "st2.catalog-graph.v2" and envelope["complete"] is True
    assert [row["id"] for row in envelope["agents"]] == ["h.lead", "h.worker"]
    worker = envelope["agents"][1]
    assert list(worker) == ["id", "identity", "host", "name", "description", "supervisor", "parentId",
                            "workspace", "desiredState", "desiredStateReason", "source", "streams",
                            "resources", "runtime", "address", "busAddress"]
    assert (worker["supervisor"], worker["parentId"]) == ("lead", "h.lead")
    assert worker["streams"] == [{"name": "ci", "launched": False}]
    assert worker["resources"] == [{"name": "spec", "uri": "file:///spec.md"}]
    assert [(row["runtimeId"], row["runtime"]["state"]) for row in worker["runtime"]] == [
        ("h.worker", "absent"), ("h.worker.resource-file", "absent")]   # the file: binding's provider runtime
    assert compact(envelope["archived"]) == compact([{
        "id": "h.gone", "host": "h", "identity": "gone", "archivedAt": NOW, "reason": "done",
        "archiveRoot": ".st2/archive/h/gone"}])
    assert envelope["issues"] == []


def test_an_archived_directory_without_a_tombstone_makes_the_graph_incomplete(fleet):
    fleet.seat("gone", '    desired-state "retired" reason="done"\n    argv "true"')
    assert fleet.st2("catalog", "archive", "--identity", "gone").returncode == 0
    assert graph(fleet)[0] == 0
    tombstone = fleet.catalog / ".st2" / "archive" / "h" / "gone.tombstone.json"
    tombstone.unlink()
    status, envelope = graph(fleet)
    assert status == 1 and envelope["complete"] is False
    assert envelope["archived"] == []
    assert envelope["issues"] == [{"severity": "error", "code": "archive-unexplained",
                                   "path": ".st2/archive/h/gone", "agent": None,
                                   "message": "archived seat has no readable tombstone"}]
    tombstone.write_text('{"schema":"st2.catalog-archive-tombstone.v1","id":"h.other"}')
    status, envelope = graph(fleet)
    assert status == 1 and {issue["path"] for issue in envelope["issues"]} == {
        ".st2/archive/h/gone", ".st2/archive/h/gone.tombstone.json"}
