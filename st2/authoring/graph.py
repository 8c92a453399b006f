"""``st2 catalog graph --json``: one versioned observation of the declaration graph
(``st2.catalog-graph.v2``), joined to the runtime envelope, with one tombstone row per archived
seat. Read-only.

The envelope, fields in this order::

    {"schema": "st2.catalog-graph.v2", "complete": bool,
     "roots": {"catalog", "stRoot", "ptyRoot"},
     "agents": [{"id", "identity", "host", "name", "description", "supervisor", "parentId",
                 "workspace", "desiredState", "desiredStateReason", "source": {"path"},
                 "streams": [{"name", "launched"}], "resources": [...], "runtime": [task rows],
                 "address", "busAddress"}],
     "archived": [{"id", "host", "identity", "archivedAt", "reason", "archiveRoot"}],
     "issues": [{"severity", "code", "path", "agent", "message"}]}

``parentId`` is the supervisor edge resolved to a declared seat (``null`` when it names none);
``runtime`` holds the seat's rows of the task inventory (``st2.task-inventory.v1``). The graph is
``complete`` only when the catalog validates, the runtime evidence is complete, and the archive
root explains itself: an archived directory without a readable tombstone (or any other
unexplained archive entry) is an error issue.
"""

from __future__ import annotations

from pathlib import Path

from st2.authoring import archive
from st2.catalog.discovery import discover
from st2.catalog.location import CatalogLocation
from st2.authoring.validation import validate_catalog
from st2.declarations import load_agent

SCHEMA = "st2.catalog-graph.v2"


def build(location: CatalogLocation, inventory: dict, pty_root: Path) -> dict:
    """The graph envelope for ``location``; ``inventory`` is the task-inventory envelope."""
    diagnostics = validate_catalog(location.root, location.host)
    issues = [{"severity": diagnostic.severity, "code": diagnostic.code, "path": diagnostic.source,
               "agent": _agent_of(diagnostic.source), "message": diagnostic.message}
              for diagnostic in diagnostics]
    issues += [{"severity": "error", "code": "runtime-incomplete", "path": None, "agent": None, "message": error}
               for error in inventory.get("errors", [])]
    tombstones, archive_issues = archive.observe(location)
    issues += [dict(issue, agent=None) for issue in archive_issues]
    rows_by_agent: dict[str, list] = {}
    for row in inventory.get("tasks", []):
        rows_by_agent.setdefault(row["agent"], []).append(row)
    loaded = []
    for seat in discover(location.root).seats:
        declaration, _ = load_agent(seat.declaration_path)
        if declaration is not None:
            loaded.append((seat, declaration))
    ids = {f"{seat.host}.{seat.identity}" for seat, _ in loaded}
    agents = [_agent(location, seat, declaration, ids, rows_by_agent) for seat, declaration in loaded]
    agents.sort(key=lambda row: row["id"])
    complete = not any(issue["severity"] == "error" for issue in issues) and bool(inventory.get("complete", True))
    return {
        "schema": SCHEMA,
        "complete": complete,
        "roots": {"catalog": str(location.root), "stRoot": str(location.root), "ptyRoot": str(pty_root)},
        "agents": agents,
        "archived": [{"id": record.id, "host": record.host, "identity": record.identity,
                      "archivedAt": record.archived_at, "reason": record.reason,
                      "archiveRoot": record.archive_root} for record in tombstones],
        "issues": issues,
    }


def _agent_of(source: str | None) -> str | None:
    parts = (source or "").split("/")
    return f"{parts[1]}.{parts[2]}" if len(parts) == 4 and parts[0] == "agents" else None


def _agent(location: CatalogLocation, seat, declaration, ids: set[str], rows_by_agent: dict) -> dict:
    agent = f"{seat.host}.{seat.identity}"
    supervisor = declaration.supervisor
    parent = None
    if supervisor is not None:
        candidate = supervisor if supervisor in ids else f"{seat.host}.{supervisor}"
        parent = candidate if candidate in ids else None
    address = declaration.address or seat.identity
    return {
        "id": declaration.id or agent,
        "identity": seat.identity,
        "host": seat.host,
        "name": declaration.name,
        "description": declaration.description,
        "supervisor": supervisor,
        "parentId": parent,
        "workspace": declaration.workspace,
        "desiredState": declaration.desired_state,
        "desiredStateReason": declaration.desired_state_reason,
        "source": {"path": str(seat.declaration_path.relative_to(location.root))},
        "streams": [{"name": task.name, "launched": task.launches}
                    for task in declaration.tasks if task.kind == "stream"],
        "resources": [resource.wire() for resource in declaration.resources],
        "runtime": rows_by_agent.get(agent, []),
        "address": address,
        "busAddress": None if declaration.retired else f"{seat.host}.{address}",
    }
