"""Apply one Claude hook event, or one status-line payload, to a seat's records.

Shared by the hot-path hook (:mod:`.hooks.observe`), the tee (:mod:`.statusline`) and
:mod:`.replay`, so a replayed capture goes through exactly the producers and writers a live seat
does. Standard library and the record modules only (hot path).
"""

from __future__ import annotations

import os

from st2.drivers.claude import HARNESS, payload as statusline_payload
from st2.drivers.claude.seat import Seat, Session
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import harness_context

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Any


def _ended_by(seat: Seat, token: str) -> bool:
    """Whether the on-disk record is this session's terminal ``ended`` (its last word)."""
    from st2.records import harness_state

    try:
        record = harness_state.decode(read_bounded(os.path.join(seat.directory, harness_state.RECORD_NAME), RECORD_LIMIT,
                                                   follow_symlinks=False))
    except Exception:
        return False
    return record.state == harness_state.ENDED and record.incarnation == token and record.exit is not None


def _state_writer(seat: Seat, session: Session, event: str, clock):  # noqa: D103
    from st2.records import harness_state

    seq = session.seq
    if not session.exported and event == "SessionStart":
        # A seat run without the wrapper: SessionStart is that path's session boundary, so it
        # makes the written claim (which also removes the previous session's harness-context).
        seq = harness_state.claim(seat.directory, seat.agent, HARNESS, session.token, clock)
    return harness_state.Writer(seat.directory, seat.agent, HARNESS, clock, pty_session=session.pty_session,
                                incarnation=session.token, claimed_seq=seq)


def apply_hook(seat: Seat, session: Session, event: str, payload: Any, clock) -> list[str]:
    """Apply one hook event; return the names of the records written (possibly none)."""
    from st2.drivers.claude import events  # imported here: the status-line tee never needs them
    from st2.records import harness_state

    written: list[str] = []
    observation = events.observation(event, payload)
    if observation is not None and session.token is not None:
        writer = _state_writer(seat, session, event, clock)
        if event == events.SESSION_START:
            # A session boundary: even a state equal to the record's is a new transition.
            writer.interrupted = True
        # A hook finishing after the wrapper reaped Claude must not replace the terminal record
        # with a live state. Residual, stated: the check and the write are two lock holds, so a
        # terminal write landing in the microseconds between them is overwritten; the wrapper
        # writes its terminal record only after Claude (the parent of every hook) is reaped.
        if not _ended_by(seat, session.token) and writer.observe(**observation._asdict()):
            written.append(harness_state.RECORD_NAME)
    if _observe_session(seat, session, event, payload, clock):
        written.append("resumable-session")
    if _provider_auth(seat, event, payload, clock):
        written.append("driver-diagnostic")  # the record's name, as the other entries
    edge = events.compaction(event, payload)
    if edge is not None:
        writer = harness_context.Writer(seat.directory, seat.agent, HARNESS, session.token or "", clock)
        count = None
        if edge.edge == "post":
            current = harness_context.read_file(os.path.join(seat.directory, harness_context.RECORD_NAME), clock.wall_ms())
            if current is not None and current.harness == HARNESS and current.compactions > 0:
                count = current.compactions  # PreCompact already counted this compaction: hold
        if writer.publish(None, harness_context.CompactionEdge(trigger=edge.trigger, count=count)):
            written.append(harness_context.RECORD_NAME)
    return written


def _provider_auth(seat: Seat, event: str, payload: Any, clock) -> bool:
    """Publish ``providerAuth`` on a rejected credential, clear it on a turn's ordinary end
    (:func:`st2.drivers.claude.events.credential_rejected`). An ordinary Stop with no record on
    disk costs one ``stat`` and imports nothing. Never raises (a hook must not fail)."""
    from st2.catalog.layout import DRIVER_DIAGNOSTIC
    from st2.drivers.claude import events

    rejected = events.credential_rejected(event, payload)
    if not rejected and not (events.turn_ended(event, payload)
                             and os.path.exists(os.path.join(seat.directory, DRIVER_DIAGNOSTIC))):
        return False
    try:
        from st2.records import driver_diagnostic

        publisher = driver_diagnostic.Publisher(seat.directory, HARNESS, clock)
        if rejected:
            return publisher.publish("providerAuth", "providerAuthRejected", "turnResult")
        publisher.adopt_held()
        return publisher.clear("providerAuth")
    except Exception:
        return False


# The events whose ``session_id`` is published as the seat's resumable session (docs/records.md §Resumable session): the
# session boundary, and the two every turn carries (so a missed SessionStart is caught up).
SESSION_EVENTS = ("SessionStart", "UserPromptSubmit", "Stop")


def _observe_session(seat: Seat, session: Session, event: str, payload: Any, clock) -> bool:
    """Publish "this incarnation observed Claude session ``session_id``" (fenced to the wrapper's
    token: only a wrapper-exported session publishes). Never raises (a hook must not fail)."""
    session_id = payload.get("session_id") if isinstance(payload, dict) else None
    if not session.exported or event not in SESSION_EVENTS or not isinstance(session_id, str) or not session_id:
        return False
    from st2.drivers.claude import events

    if events.is_nested(payload):
        return False  # a sub-agent's event names the sub-agent's transcript, never the seat's
    try:
        from pathlib import Path  # the session store's paths are Paths; this arm pays for them

        from st2.drivers.session_ids import is_uuid
        from st2.runtime import resume
        from st2.runtime.resumable_session import SessionStore

        directory = Path(seat.directory)
        return resume.observe(SessionStore.of_seat(directory), session.pty_session, session.token, session_id,
                              clock, directory, accepts=is_uuid, agent=seat.agent)
    except Exception:
        return False


def record_reading(seat: Seat, token: str, payload: Any, clock) -> bool:
    """Publish one status-line payload's reading under the write policy; return whether a write
    landed."""
    reading = statusline_payload.reading(payload, observed_at_ms=clock.wall_ms())
    writer = harness_context.Writer(seat.directory, seat.agent, HARNESS, token, clock)
    return writer.publish(reading)
