"""Resuming a seat's conversation across relaunches: the harness-neutral core
(docs/records.md §Resumable session).

The record is :mod:`st2.runtime.resumable_session` (where it lives and why, its wire shape).
This module is the machine over it and the small API every driver uses:

``begin(store, runtime_id, agent, harness, incarnation, policy, clock, seat_directory, accepts) -> Binding``
    The wrapper calls it once, right after its relaunch claim (``incarnation`` is the claim's
    token) and before it spawns the harness. ``accepts(session_id) -> bool`` is the harness's id
    shape (:mod:`st2.drivers.session_ids`): a recorded id it refuses is never resumed (anything
    that can write the record can write any id there), nor is a record naming another seat. ``store`` is
    ``SessionStore.of_seat(seat_directory)`` (or ``SessionStore.of(catalog, host)``); ``policy``
    is the seat's declared ``resume`` word (``st2.drivers.resume_hold.resume_policy``). Under
    the record's lock it decides (:func:`decide`) and publishes this incarnation's record,
    consumes ``st2 down``'s stop marker, clears a predecessor's ``resume`` diagnostic, and returns
    the plan: ``binding.start`` (:class:`Start`) and ``binding.resume_id`` (the harness session
    to resume, or None for a fresh session).
``binding.observed(session_id) -> bool``
    The driver saw the harness's own session identity (record it once the harness has it: a
    resumable conversation, not a name with nothing behind it); an id ``accepts`` refuses is not
    recorded. For a process other than the wrapper (a Claude hook): ``observe(store, runtime_id,
    incarnation, session_id, clock, seat_directory, accepts)``, fenced to ``incarnation``, so only
    the incarnation the record names can rebind the seat. ``binding.refresh()`` re-reads what such a process wrote.
``binding.refused(diagnostics=None) -> bool``
    The harness refused or could not find ``resume_id`` (it ended before reporting it, or the
    driver saw the store no longer holds it). Exactly once per incarnation: the id joins ``lost``
    (kept for an operator, never resumed again), the record reads ``fallback``, the ``resume``
    stage of the driver-diagnostic is published (through ``diagnostics``, the driver's own
    ``Publisher``, when it keeps one), and the wrapper starts the harness fresh — once; a second
    refusal raises :class:`AlreadyFellBack`, never a loop. A harness answering a resume with
    another session id is the same fallback (:func:`observe` records it).

The PTY wrappers get all of this from ``st2.drivers.child_session.ChildSession`` by setting
``resumes = True`` and overriding ``resume_argv`` (and ``resume_unavailable`` where a harness would
open a missing session as a new one).

The machine, one transition function over :class:`Start` (each edge named)::

    decide:      no record / another seat's record / policy never / stopped by st2 down /
                 other harness / no id / an id not of the
                 harness's shape                -> FRESH
                 the record's own id, lost      -> FALLBACK  (st2 lost it before the relaunch:
                                                   a move it could not carry; the resume
                                                   diagnostic stands)
                 a recorded id                  -> RESUMING (that id)
    RESUMING  -- observed the resumed id     --> RESUMED
    RESUMING  -- observed another id         --> FALLBACK  (the resumed id is lost)
    RESUMING  -- refused                     --> FALLBACK  (the resumed id is lost; start fresh)
    FRESH | RESUMED | FALLBACK -- observed   --> itself   (the new id is the one to resume next)

A resume is attempted only by the incarnation that decided it, and a fallback is FRESH in all but
its label, so nothing ever retries a dead id. Standard library only (Claude's hooks import it).
"""

from __future__ import annotations

import enum
from typing import NamedTuple

from st2.runtime import resumable_session as records
from st2.runtime.resumable_session import Lost, SessionRecord, SessionStore

LAST, NEVER = "last", "never"
POLICIES: tuple[str, ...] = (LAST, NEVER)
DEFAULT_POLICY = LAST

DIAGNOSTIC_STAGE = "resume"
DIAGNOSTIC_REASON = "resumeRefused"
DIAGNOSTIC_SOURCE = "resumeAttempt"


class Start(enum.Enum):
    """How the current incarnation's harness session began (the record's ``start`` word)."""

    FRESH = records.FRESH
    RESUMING = records.RESUMING
    RESUMED = records.RESUMED
    FALLBACK = records.FALLBACK


EDGES = {
    (Start.RESUMING, "observed-resumed"): Start.RESUMED,   # RESUMING -> RESUMED
    (Start.RESUMING, "observed-other"): Start.FALLBACK,    # RESUMING -> FALLBACK (silently fresh)
    (Start.RESUMING, "refused"): Start.FALLBACK,           # RESUMING -> FALLBACK (start fresh once)
    (Start.FRESH, "observed"): Start.FRESH,                # FRESH -> FRESH
    (Start.RESUMED, "observed"): Start.RESUMED,            # RESUMED -> RESUMED (e.g. /clear)
    (Start.FALLBACK, "observed"): Start.FALLBACK,          # FALLBACK -> FALLBACK
}


def transition(start: Start, event: str) -> Start:
    """The one transition function. Raise ValueError for an edge the machine does not have."""
    try:
        return EDGES[(start, event)]
    except KeyError:
        raise ValueError(f"no edge from {start.value} on {event!r}") from None


class Plan(NamedTuple):
    start: Start
    session_id: str | None


def decide(previous: SessionRecord | None, policy: str, stopped: bool, harness: str,
           accepts=None) -> Plan:
    """What a new incarnation starts with (the ``decide`` rows of the module docstring);
    ``accepts`` is the harness's id shape (None: any id)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown resume policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if (policy == NEVER or stopped or previous is None or previous.harness != harness
            or previous.session_id is None):
        return Plan(Start.FRESH, None)
    if previous.session_id in previous.lost_ids():
        # st2 lost the running session before this relaunch (a move to an account whose config
        # location cannot name it, st2.accounts.placement): fresh, labelled as the fallback it is.
        return Plan(Start.FALLBACK, None)
    if accepts is not None and not accepts(previous.session_id):
        return Plan(Start.FRESH, None)
    return Plan(Start.RESUMING, previous.session_id)


def _event(record: SessionRecord, session_id: str) -> str:
    if Start(record.start) is Start.RESUMING:
        return "observed-resumed" if session_id == record.resumed_from else "observed-other"
    return "observed"


def _lose(record: SessionRecord, now_ms: int) -> tuple[Lost, ...]:
    entry = Lost(record.resumed_from, record.incarnation, now_ms)
    return (record.lost + (entry,))[-records.LOST_LIMIT:]


def observe(store: SessionStore, runtime_id: str, incarnation: str, session_id: str, clock,
            seat_directory=None, accepts=None, agent: str | None = None) -> bool:
    """Publish "``runtime_id`` incarnation ``incarnation`` observed harness session
    ``session_id``". Return whether the record changed; False (nothing written) when
    ``session_id`` is not of the harness's shape (``accepts``, when given), when the record names
    another incarnation, another seat than ``agent``, or none (the fence), or already says so. A
    resume answered with another session is the fallback: the resumed id is lost, and the
    ``resume`` diagnostic is published into ``seat_directory`` when given."""
    if not isinstance(session_id, str) or not session_id or len(session_id) > records.SESSION_ID_MAX_CHARS:
        return False
    if accepts is not None and not accepts(session_id):
        return False
    # Every turn's hooks ask (UserPromptSubmit, Stop): an unlocked read answers "already so" or
    # "not this incarnation's" without the lock; only a change is decided again under it.
    current = records.read(store, runtime_id, agent)
    if current is None or current.incarnation != incarnation or (
            current.session_id == session_id and current.start != records.RESUMING):
        return False
    now_ms = clock.wall_ms()
    with records.locked(store, runtime_id):
        current = records.read(store, runtime_id, agent)
        if current is None or current.incarnation != incarnation:
            return False
        start = transition(Start(current.start), _event(current, session_id))
        if current.session_id == session_id and start.value == current.start:
            return False
        fell_back = start is Start.FALLBACK and current.start == records.RESUMING
        lost = _lose(current, now_ms) if fell_back else current.lost
        records.write(store, current._replace(start=start.value, session_id=session_id, lost=lost,
                                     written_at_ms=now_ms))
    if fell_back and seat_directory is not None:
        publish_lost(seat_directory, current.harness, clock)
    return True


def lose(store: SessionStore, runtime_id: str, agent: str, session_id: str, clock) -> bool:
    """st2 lost ``session_id``, the seat's current session, before a relaunch (a move to an
    account whose config location cannot name it): the id joins ``lost`` (never resumed again),
    so the next incarnation starts fresh as a fallback (:func:`decide`). Return False, writing
    nothing, when the record no longer names that session."""
    now_ms = clock.wall_ms()
    with records.locked(store, runtime_id):
        current = records.read(store, runtime_id, agent)
        if current is None or current.session_id != session_id:
            return False
        lost = _lose(current._replace(resumed_from=session_id), now_ms)
        records.write(store, current._replace(lost=lost, written_at_ms=now_ms))
    return True


def publish_lost(seat_directory, harness: str, clock, diagnostics=None) -> None:
    """Publish the ``resume`` stage of ``harness``'s driver-diagnostic (through the driver's own
    :class:`~st2.records.driver_diagnostic.Publisher` when it keeps one)."""
    from st2.records import driver_diagnostic

    if diagnostics is None:
        if harness not in driver_diagnostic.DRIVERS:
            return
        diagnostics = driver_diagnostic.Publisher(seat_directory, harness, clock)
    diagnostics.publish(DIAGNOSTIC_STAGE, DIAGNOSTIC_REASON, DIAGNOSTIC_SOURCE)


class AlreadyFellBack(RuntimeError):
    """``refused`` a second time in one incarnation: a fallback is fresh and cannot be refused."""


class Binding:
    """One incarnation's hold on its seat's record (made by :func:`begin`)."""

    def __init__(self, store: SessionStore, record: SessionRecord, seat_directory, clock, accepts=None,
                 discarded: str | None = None) -> None:
        self.store = store
        self.accepts = accepts
        # The recorded id :func:`begin` would not resume for its shape (for the wrapper to say).
        self.discarded = discarded
        self.agent = record.agent
        self.runtime_id = record.runtime_id
        self.harness = record.harness
        self.incarnation = record.incarnation
        self.start = Start(record.start)
        self.resume_id = record.resumed_from if self.start is Start.RESUMING else None
        self.seat_directory = seat_directory
        self.clock = clock

    def observed(self, session_id: str) -> bool:
        """The harness reported its session identity (see :func:`observe`)."""
        changed = observe(self.store, self.runtime_id, self.incarnation, session_id, self.clock,
                          self.seat_directory, self.accepts, self.agent)
        self.refresh()
        return changed

    def refresh(self) -> Start:
        """Re-read the record (another process — a hook — may have observed the session) and
        return this incarnation's start; unchanged when the record is no longer this one's."""
        current = records.read(self.store, self.runtime_id, self.agent)
        if current is not None and current.incarnation == self.incarnation:
            self.start = Start(current.start)
            if self.start is not Start.RESUMING:
                self.resume_id = None
        return self.start

    def refused(self, diagnostics=None) -> bool:
        """The harness refused ``resume_id``: record the fallback (see the module docstring).
        ``diagnostics`` is the driver's :class:`st2.records.driver_diagnostic.Publisher`, if it
        keeps one; else one is made. Return False when the record is no longer this
        incarnation's (nothing written). Raise :class:`AlreadyFellBack` on a second call."""
        if self.start is not Start.RESUMING:
            raise AlreadyFellBack(f"{self.runtime_id}: {self.start.value} cannot be refused")
        now = self.clock.wall_ms()
        with records.locked(self.store, self.runtime_id):
            current = records.read(self.store, self.runtime_id, self.agent)
            if current is None or current.incarnation != self.incarnation:
                return False
            start = transition(Start(current.start), "refused")
            records.write(self.store, current._replace(start=start.value, session_id=None,
                                              lost=_lose(current, now), written_at_ms=now))
        self.start = start
        self.resume_id = None
        publish_lost(self.seat_directory, self.harness, self.clock, diagnostics)
        return True


def begin(store: SessionStore, runtime_id: str, agent: str, harness: str, incarnation: str, policy: str,
          clock, seat_directory, accepts=None) -> Binding:
    """Decide and publish this incarnation's record; consume the stop marker (see the module
    docstring). A record naming another seat than ``agent`` reads absent; a recorded id
    ``accepts`` refuses is dropped (``binding.discarded`` names it). A start that is not a
    fallback clears a predecessor's ``resume`` diagnostic; a fallback publishes it."""
    now = clock.wall_ms()
    with records.locked(store, runtime_id):
        previous = records.read(store, runtime_id, agent)
        stopped = records.stopped_by_down(store, runtime_id)
        plan = decide(previous, policy, stopped, harness, accepts)
        discarded = None
        if previous is not None and previous.session_id is not None and accepts is not None \
                and not accepts(previous.session_id):
            discarded = previous.session_id
        record = SessionRecord(runtime_id=runtime_id, agent=agent, harness=harness, incarnation=incarnation,
                               start=plan.start.value, session_id=plan.session_id, resumed_from=plan.session_id,
                               lost=previous.lost if previous is not None else (), written_at_ms=now)
        records.write(store, record)
        if stopped:
            records.clear_stopped(store, runtime_id)
    if plan.start is Start.FALLBACK:
        publish_lost(seat_directory, harness, clock)
    else:
        clear_lost_diagnostic(seat_directory, harness, clock)
    return Binding(store, record, seat_directory, clock, accepts, discarded)


def clear_lost_diagnostic(seat_directory, harness: str, clock) -> None:
    """Remove a predecessor's published ``resume`` stage of ``harness``'s driver (the next
    incarnation is not a fallback: the loss has been superseded). Other stages stand."""
    import json

    from st2.records import driver_diagnostic

    if harness not in driver_diagnostic.DRIVERS:
        return
    path = seat_directory / driver_diagnostic.RECORD_NAME
    found = driver_diagnostic.read_file(path, clock.wall_ms())
    if found.status != driver_diagnostic.FAILURE or found.driver != harness or found.stage != DIAGNOSTIC_STAGE:
        return
    publisher = driver_diagnostic.Publisher(seat_directory, harness, clock)
    try:
        publisher.failures[DIAGNOSTIC_STAGE] = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return
    publisher.clear(DIAGNOSTIC_STAGE)
