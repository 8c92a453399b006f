"""The stable JSON of `st2 agents --json [--enrich]`: field names, order and nulls are the
wire contract (docs/records.md §Roster JSON); an empty roster is ``[]``."""

from __future__ import annotations

import json
from typing import Any

from st2.roster.row import RosterRow


def row_object(row: RosterRow, enrich: bool) -> dict[str, Any]:
    wire: dict[str, Any] = {
        "identity": row.identity,
        "status": row.status,
        "name": row.name,
        "description": row.description,
        "retired": row.retired,
        "resources": row.resources,
    }
    if enrich:
        wire["lastActivity"] = row.last_activity_ms
        wire["inbox"] = row.inbox
        wire["session"] = row.session
    wire["desiredState"] = row.desired_state
    wire["desiredStateReason"] = row.desired_state_reason
    wire["observedState"] = row.observed_state
    wire["driverDiagnostic"] = row.driver_diagnostic
    wire["context"] = row.context
    wire["id"] = row.id
    wire["address"] = row.address
    wire["busAddress"] = row.bus_address
    return wire


def to_json(rows: list[RosterRow], enrich: bool) -> str:
    return json.dumps([row_object(row, enrich) for row in rows], separators=(",", ":"), ensure_ascii=False)
