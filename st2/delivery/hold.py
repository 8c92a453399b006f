"""The one delivery-hold predicate of a seat (docs/delivery.md §Presence holds), consulted by every
deliverer of its mail: the DING notifier and the Codex and opencode pumps, and shown by the roster
(``deliveryHold``) and Doctor.

Given the seat's ``status`` record and the wall clock, :func:`delivery_hold` returns the hold's
name, or None when delivery may go. Only a fresh declared ``dnd`` holds (:data:`DND_HOLD`): a dnd
nobody renews reads ``unknown`` once it is stale and holds nothing, and ``busy`` never holds. A
held seat's mail stays unread and unowned: no notice, no ledger entry, no transport call.

Standard library only: the forked DING and session wrappers import this.
"""

from __future__ import annotations

from pathlib import Path

from st2.records import status as status_record

DND_HOLD = "dnd"


def delivery_hold(status_path: Path, now_ms: int) -> str | None:
    """``"dnd"`` while the seat's declared presence is a fresh dnd, else None."""
    return hold_of(status_record.read_file(Path(status_path), now_ms).presence)


def hold_of(presence: str) -> str | None:
    """The hold a projected presence makes (for a reader that has the presence already)."""
    return DND_HOLD if presence == status_record.DND else None
