"""The one delivery-hold predicate of a seat (docs/delivery.md §Presence holds), consulted by every
deliverer of its mail: the DING notifier and the Codex and opencode pumps, and shown by the roster
(``deliveryHold``) and Doctor.

Given the seat's ``status`` record and the wall clock, :func:`delivery_hold` returns the hold's
name, or None when delivery may go. Two reasons hold, in this order:

- :data:`DND_HOLD` — the one gate of the delivery contract: a fresh declared ``dnd``. A dnd nobody renews reads
  ``unknown`` once it is stale and holds nothing, and ``busy`` never holds.
- :data:`BUDGET_HOLD` — st2's declared extension (INVARIANTS.md, docs/accounts.md): the seat runs
  on an account that says ``hold-on-pause #true`` and whose usage verdict is a fresh PAUSE
  (:func:`st2.delivery.budget.budget_hold`). It lifts by itself when the paused window resets or
  the snapshot stops reading PAUSE; a STALE reading holds nothing. Asked only when the caller
  names the runtime scope and the seat's runtime id.

A held seat's mail stays unread and unowned: no notice, no ledger entry, no transport call.

Standard library only: the forked DING and session wrappers import this.
"""

from __future__ import annotations

from pathlib import Path

from st2.records import status as status_record

DND_HOLD = "dnd"
BUDGET_HOLD = "budget"


def delivery_hold(status_path: Path, now_ms: int, scope=None, runtime_id: str | None = None,
                  account: str | None = None) -> str | None:
    """``"dnd"`` while the seat's declared presence is a fresh dnd, else ``"budget"`` while its
    account's budget holds (given ``scope`` and ``runtime_id``; ``account`` when the caller runs
    as the seat's generation and knows it, else its launch record says), else None."""
    held = hold_of(status_record.read_file(Path(status_path), now_ms).presence)
    if held is None and scope is not None and runtime_id is not None:
        from st2.delivery.budget import budget_hold

        if budget_hold(scope, runtime_id, now_ms, account) is not None:
            return BUDGET_HOLD
    return held


def hold_of(presence: str) -> str | None:
    """The presence hold a projected presence makes (for a reader that has the presence already;
    the budget reason is :func:`st2.delivery.budget.budget_hold`'s)."""
    return DND_HOLD if presence == status_record.DND else None
