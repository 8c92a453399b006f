"""Build roster rows from a discovered catalog. Read-only: nothing here writes a file.

Each axis comes from its own record reader and none is derived from another: an unknown
observed state never hides a context reading, presence never implies desired lifecycle.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from st2.bus import boxes
from st2.catalog import layout
from st2.declarations.model import RETIRED, RUNNING
from st2.delivery.hold import hold_of
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import driver_diagnostic, harness_context, harness_state, status

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the roster reads the store lazily, on --enrich
    from st2.delivery.budget import BudgetHold
    from st2.runtime.resumable_session import SessionRecord
    from st2.worktree.state import Reading as WorktreeReading


@dataclass
class RosterRow:
    """One seat as the roster shows it. Each record axis is its reader's typed projection —
    ``observed_state`` (:class:`st2.records.harness_state.ObservedState`, None: no record),
    ``driver_diagnostic`` (:class:`st2.records.driver_diagnostic.Diagnostic`), ``context``
    (:class:`st2.records.harness_context.Reading`, None: no readable record) — and ``session``
    the resumable-session record (:class:`st2.runtime.resumable_session.SessionRecord`) under
    ``--enrich``, ``worktree`` this host's worktree-state reading
    (:class:`st2.worktree.state.Reading`, None: no worktree declared or no record here),
    ``delivery_hold`` the hold every deliverer of the seat's mail honours
    (:func:`st2.delivery.hold.hold_of` of the presence: ``"dnd"``; else ``"budget"`` while
    ``budget_hold``, :func:`st2.delivery.budget.budget_hold` of this host's seat, holds; or None),
    ``account`` the seat's declared account (None: none declared);
    :mod:`st2.roster.wire` alone turns a row into its JSON and fixes the order."""

    identity: str  # <host>.<identity>
    host: str
    bare_identity: str
    status: str
    name: str | None
    description: str | None
    retired: bool
    resources: list[dict[str, Any]]
    desired_state: str
    desired_state_reason: str | None
    observed_state: harness_state.ObservedState | None
    driver_diagnostic: driver_diagnostic.Diagnostic
    context: harness_context.Reading | None
    id: str
    address: str
    bus_address: str | None
    last_activity_ms: float | None = None
    inbox: int = 0
    harness: str | None = None  # the declared driver block's harness (not on the wire; a view's filter)
    session: SessionRecord | None = None  # --enrich: this host's resumable-session record
    worktree: WorktreeReading | None = None  # this host's worktree-state reading (st2.worktree.state)
    delivery_hold: str | None = None  # the seat's delivery hold (st2.delivery.hold): "dnd" or None
    # The declared bindings' resource state records (st2.resources.state.State), in name order.
    resource_states: list = field(default_factory=list)
    account: str | None = None  # the seat's declared account (st2.declarations.accounts)
    budget_hold: BudgetHold | None = None  # its running account's budget hold (st2.delivery.budget)


def _read_bytes(path: str) -> bytes | None:
    """The whole record, None when absent, ``b""`` when unreadable, not a regular file or over
    the record bound (present but untrustworthy). Through :func:`st2.fs.read.read_bounded`: a
    planted FIFO never blocks the roster."""
    try:
        return read_bounded(path, RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:
        return b""


def last_activity_ms(seat_directory: Path, status_activity_ms: int | None) -> float | None:
    """Newest origin-timed activity: the newest message filename time across inbox and archive
    (:func:`st2.bus.boxes.activity_ms`, never an mtime) and the status record's own time (a v1
    record's embedded stamp, a legacy word's mtime). A float, the JSON number type the original
    emits (``1784649988999.0``); None when neither exists."""
    stamps = [stamp for stamp in (boxes.activity_ms(seat_directory), status_activity_ms) if stamp is not None]
    return float(max(stamps)) if stamps else None


INVALID = "invalid"  # desiredState of a seat whose declaration does not load


def build_row(host: str, identity: str, directory: Path, facts: dict[str, Any], catalog_root: Path,
              now_ms: int, enrich: bool, liveness=None, remote: bool = False) -> RosterRow:
    """One seat's row from its declaration's facts (:func:`st2.runtime.declaration_cache.facts_of`).
    ``liveness`` is the same-host PTY session probe (None for another host's seat: its records
    are judged by their own stamps alone). ``remote`` says the seat is another host's, so its
    files arrived by replication, whose engine rewrites mtimes: every record is judged by its
    embedded stamp only, and a legacy presence word (which has none) reads ``unknown`` (docs/records.md
    §Status, docs/records.md §Harness state). A declaration that does not load has
    ``desiredState`` ``invalid`` with its first error as the reason: nothing can be said of an
    intent that does not parse, least of all ``running``."""
    runtime_id = f"{host}.{identity}"
    # Plain string paths: pathlib's per-join parsing was a fifth of a 627-seat roster's time.
    prefix = os.fspath(directory) + os.sep
    status_bytes, status_mtime_ms = status.load(prefix + layout.STATUS)
    if remote:
        status_mtime_ms = None
    status_reading = status.read(status_bytes, now_ms, mtime_ms=status_mtime_ms)
    state_bytes = _read_bytes(prefix + layout.HARNESS_STATE)
    if state_bytes == b"":
        # Empty or unreadable: let the file reader tell an unreadable record from a malformed one.
        observed = harness_state.read_file(prefix + layout.HARNESS_STATE, now_ms, liveness, runtime_id)
    else:
        observed = harness_state.read(state_bytes, now_ms, liveness, runtime_id)
    context = harness_context.read(_read_bytes(prefix + layout.HARNESS_CONTEXT), now_ms, runtime_id)
    diagnostic = driver_diagnostic.read(_read_bytes(prefix + layout.DRIVER_DIAGNOSTIC), now_ms)

    desired_state, desired_state_reason = facts["desiredState"] or RUNNING, facts["desiredStateReason"]
    if not facts["loaded"] and facts["errors"]:
        desired_state, desired_state_reason = INVALID, facts["errors"][0]
    retired = desired_state == RETIRED
    row = RosterRow(
        identity=runtime_id,
        host=host,
        bare_identity=identity,
        status=status_reading.presence,
        name=facts["name"],
        description=facts["description"],
        retired=retired,
        resources=facts["resources"],
        desired_state=desired_state,
        desired_state_reason=desired_state_reason,
        observed_state=observed,
        driver_diagnostic=diagnostic,
        context=context,
        id=facts["id"] or runtime_id,
        address=facts["address"] or identity,
        bus_address=None if retired else runtime_id,
        harness=facts["harness"],
        delivery_hold=hold_of(status_reading.presence),
        account=facts.get("account"),
    )
    if row.account is not None and liveness is not None and not remote:
        # Only a seat declaring an account pays for the read (its launch record names the
        # account it runs on, whose budget record says whether it holds).
        from st2.delivery.budget import budget_hold

        row.budget_hold = budget_hold(liveness.scope.directory, runtime_id, now_ms)
        if row.budget_hold is not None and row.delivery_hold is None:
            row.delivery_hold = row.budget_hold.to_wire()["reason"]
    if facts["worktree"] is not None and liveness is not None and not remote:
        from st2.worktree import state as worktree_state

        row.worktree = worktree_state.reading(worktree_state.load(liveness.scope.directory, runtime_id), now_ms)
    if facts["resources"]:
        from st2.resources import state as resource_state

        found = resource_state.read_all(directory, runtime_id)
        # A record of the binding's earlier URI (the binding re-declared elsewhere) reads absent.
        row.resource_states = [found[resource["name"]] for resource in facts["resources"]
                               if resource["name"] in found and found[resource["name"]].uri == resource["uri"]]
    if enrich:
        row.last_activity_ms = last_activity_ms(directory, status.activity_time_ms(status_bytes, now_ms, status_mtime_ms))
        row.inbox = len(boxes.unread_names(directory))
        store = getattr(liveness, "session_store", None)  # this host's seat: its record is here
        if store is not None:
            row.session = session_record(store, runtime_id)
    return row


def session_record(store, runtime_id: str) -> SessionRecord | None:
    """The seat's resumable-session record (:class:`st2.runtime.resumable_session.SessionRecord`,
    whose ``start`` says how the current harness session began: ``fresh``, ``resuming``,
    ``resumed``, ``fallback``), or None when this host holds no trustworthy record. ``store`` is
    this host's :class:`~st2.runtime.resumable_session.SessionStore`."""
    from st2.runtime import resumable_session

    return resumable_session.read(store, runtime_id)


def lost_session(record: SessionRecord | None) -> str | None:
    """The session-lost rule: the id of the harness session a relaunch could not resume, while
    the seat's current session (``record``, a resumable-session record or None) is that
    fallback; else None."""
    if record is None:
        return None
    from st2.runtime.resumable_session import FALLBACK

    return record.lost[-1].session_id if record.start == FALLBACK and record.lost else None
