"""The stable JSON of `st2 agents --json [--enrich]`: field names, order and nulls are the
wire contract (docs/records.md §Roster JSON); an empty roster is ``[]``."""

from __future__ import annotations

import json
from typing import Any

from st2.records import driver_diagnostic, harness_context, harness_state
from st2.roster.row import RosterRow
from st2.worktree import state as worktree_state

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from st2.runtime.resumable_session import SessionRecord


def session_object(record: SessionRecord | None) -> dict[str, Any] | None:
    """The enriched row's ``session``: ``{"start","sessionId","lostSessionIds"}`` from the seat's
    resumable-session record (:mod:`st2.runtime.resumable_session`), or None without one."""
    if record is None:
        return None
    return {"start": record.start, "sessionId": record.session_id,
            "lostSessionIds": [entry.session_id for entry in record.lost]}


def row_object(row: RosterRow, enrich: bool) -> dict[str, Any]:
    """The row's JSON object: the typed readings turned into their wire objects here, and only
    here (:func:`st2.records.harness_state.to_wire` and its siblings)."""
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
        wire["session"] = session_object(row.session)
    wire["desiredState"] = row.desired_state
    wire["desiredStateReason"] = row.desired_state_reason
    wire["observedState"] = harness_state.to_wire(row.observed_state)
    wire["driverDiagnostic"] = driver_diagnostic.to_wire(row.driver_diagnostic)
    wire["context"] = harness_context.to_wire(row.context)
    wire["id"] = row.id
    wire["address"] = row.address
    wire["busAddress"] = row.bus_address
    wire["worktree"] = worktree_state.to_wire(row.worktree)
    wire["deliveryHold"] = row.delivery_hold
    if enrich:  # appended after every earlier field: readers of the older shape are unaffected
        from st2.resources.state import to_wire as resource_state_wire

        wire["resourceStates"] = [resource_state_wire(state) for state in row.resource_states]
    # Accounts (docs/accounts.md), appended after every earlier field of either shape.
    wire["account"] = row.account
    wire["budgetHold"] = row.budget_hold.to_wire() if row.budget_hold is not None else None
    return wire


def to_json(rows: list[RosterRow], enrich: bool) -> str:
    """The roster's JSON text: one array of :func:`row_object`, compact, UTF-8 unescaped."""
    return json.dumps([row_object(row, enrich) for row in rows], separators=(",", ":"), ensure_ascii=False)
