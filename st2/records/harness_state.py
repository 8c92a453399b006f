"""Observed harness state: the ``harness-state`` record (docs/records.md §Harness state).

The record is one JSON object, ``st2.harness-state.v1``, written by the owning session's driver
processes (wrapper, channel, hooks). Field order on the wire::

    schema, agent, harness, state, blockedOn, inputBuffer, ask, [reason], [exit], [ptySession],
    incarnation, seq, sinceMs, writtenAtMs, transitions

Vocabularies: state ready/idle/active/child/ended (``child`` is reserved: readable, emitted by no
producer yet), blockedOn none/human, inputBuffer empty/nonempty/unknown, ask
none/permission/question/review. A future word decodes as ``unknown``, never as a definite one.

Reading (:func:`read`, pure, in evaluation order). A missing record is ``None`` — no
observation — and never ``unknown``. Otherwise ``unknown`` is derived, with a distinct reason:

``malformed-record`` (bytes that do not decode as a v1-shaped record), ``unsupported-schema``
(a schema other than ``st2.harness-state.v1``), ``future-skew`` (``writtenAtMs`` more than 60 s
ahead), ``stale`` (``writtenAtMs`` at least 15 min old), ``literal-unknown`` (a written
``unknown`` state), ``claimed`` (the relaunch claim's ``ended``/``superseded``),
``unfenced-record`` (a live state naming no pty session, a probe given) and ``session-dead`` (a
live state whose pty session is provably dead).

(``unreadable-record`` is the ninth, for a file that exists but cannot be read:
:func:`read_file`.) An indeterminate probe answer downgrades nothing, and a fresh ``ended``
survives the liveness cross-check: a terminal record is meant to outlive its writer. Freshness
comes from ``writtenAtMs``, never file mtime. The reader imports only the standard library.
"""

from __future__ import annotations

import os
from collections import namedtuple

from st2.catalog import layout
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing (or pathlib) costs a hook firing milliseconds
    from pathlib import Path
    from typing import Any, Callable

    LivenessProbe = Callable[[str], str]

SCHEMA = "st2.harness-state.v1"
RECORD_NAME = layout.HARNESS_STATE

HARNESS_STATE_STALE_MS = 15 * 60 * 1000
"""An observation at least this old reads ``unknown``. Its own value, deliberately not an alias
of presence's: retuning presence must not silently retune observed state."""
HARNESS_STATE_REFRESH_MS = 5 * 60 * 1000
"""How often a writer that still holds evidence re-stamps an unchanged state."""
HARNESS_STATE_FUTURE_SKEW_MS = 60 * 1000
"""A stamp further than this ahead of the reader's clock is untrusted."""

READY, IDLE, ACTIVE, CHILD, ENDED, UNKNOWN = "ready", "idle", "active", "child", "ended", "unknown"
STATES: tuple[str, ...] = (READY, IDLE, ACTIVE, CHILD, ENDED)
HUMAN = "human"
BLOCKED_ON: tuple[str, ...] = ("none", HUMAN)
INPUT_BUFFERS: tuple[str, ...] = ("empty", "nonempty", "unknown")
ASKS: tuple[str, ...] = ("none", "permission", "question", "review")

SUPERSEDED = "superseded"
"""The reason the relaunch claim writes on its ``ended`` placeholder."""

# Liveness probe answers. A probe (``LivenessProbe``) is ``Callable[[str], str]`` taking the
# record's pty session.
SESSION_ALIVE, SESSION_DEAD, SESSION_INDETERMINATE = "alive", "dead", "indeterminate"

REASON_UNREADABLE = "unreadable-record"
REASON_MALFORMED = "malformed-record"
REASON_UNSUPPORTED_SCHEMA = "unsupported-schema"
REASON_FUTURE_SKEW = "future-skew"
REASON_STALE = "stale"
REASON_LITERAL_UNKNOWN = "literal-unknown"
REASON_CLAIMED = "claimed"
REASON_UNFENCED = "unfenced-record"
REASON_SESSION_DEAD = "session-dead"
REASON_FOREIGN_AGENT = "foreign-agent"  # the record's `agent` names another seat


class Record(namedtuple("Record", (
        "schema", "agent", "harness", "state", "blocked_on", "input_buffer", "ask", "reason", "exit", "pty_session",
        "incarnation", "seq", "since_ms", "written_at_ms", "transitions"))):
    """The decoded record, before any derivation. ``reason``, ``exit`` and ``pty_session`` are
    str | None, ``seq``, ``since_ms``, ``written_at_ms`` and ``transitions`` ints, the rest strs.
    (A namedtuple class, not a dataclass: hooks import this module on every firing, where
    dataclasses and typing are not affordable; docs/memory.md §Both install kinds.)"""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The record's own JSON object, in wire order, optional fields omitted when None."""
        value: dict[str, Any] = {
            "schema": self.schema,
            "agent": self.agent,
            "harness": self.harness,
            "state": self.state,
            "blockedOn": self.blocked_on,
            "inputBuffer": self.input_buffer,
            "ask": self.ask,
        }
        if self.reason is not None:
            value["reason"] = self.reason
        if self.exit is not None:
            value["exit"] = self.exit
        if self.pty_session is not None:
            value["ptySession"] = self.pty_session
        value.update(
            incarnation=self.incarnation,
            seq=self.seq,
            sinceMs=self.since_ms,
            writtenAtMs=self.written_at_ms,
            transitions=self.transitions,
        )
        return value


def _word(record: dict[str, Any], name: str, vocabulary: tuple[str, ...], default: str | None = None) -> str:
    value = decoding.string(record, name, default=default)
    return value if value in vocabulary else UNKNOWN


def decode(data: bytes) -> Record:
    """Decode the bytes into a :class:`Record` (any schema string), or raise
    :class:`decoding.Malformed`. Additive-tolerant: unknown fields are ignored."""
    record = decoding.load_object(data)
    return Record(
        schema=decoding.string(record, "schema"),
        agent=decoding.string(record, "agent"),
        harness=decoding.string(record, "harness"),
        state=_word(record, "state", STATES),
        blocked_on=_word(record, "blockedOn", BLOCKED_ON),
        input_buffer=_word(record, "inputBuffer", INPUT_BUFFERS),
        ask=_word(record, "ask", ASKS, default="none"),
        reason=decoding.optional_string(record, "reason"),
        exit=decoding.optional_string(record, "exit"),
        pty_session=decoding.optional_string(record, "ptySession"),
        incarnation=decoding.string(record, "incarnation", default=""),
        seq=decoding.unsigned(record, "seq", default=0),
        since_ms=decoding.stamp(record, "sinceMs"),
        written_at_ms=decoding.stamp(record, "writtenAtMs"),
        transitions=decoding.unsigned(record, "transitions"),
    )


class ObservedState(namedtuple("ObservedState", (
        "state", "blocked_on", "input_buffer", "ask", "harness", "since_ms", "reason", "exit", "observed_at_ms", "seq",
        "transitions", "incarnation"), defaults=(None, None, None, None))):
    """The derived view a consumer reads. ``state`` already folds in every derivation; when it
    is ``unknown``, ``reason`` names which one. ``state``, ``blocked_on``, ``input_buffer`` and
    ``ask`` are strs; ``harness``, ``reason``, ``exit``, ``incarnation`` str | None;
    ``since_ms``, ``observed_at_ms``, ``seq``, ``transitions`` int | None."""

    __slots__ = ()

    @property
    def is_unknown(self) -> bool:
        return self.state == UNKNOWN

    @property
    def is_stale(self) -> bool:
        """Whether the observation reads ``unknown`` because its record aged past
        :data:`HARNESS_STATE_STALE_MS`."""
        return self.state == UNKNOWN and self.reason == REASON_STALE

    @property
    def blocked_on_human(self) -> bool:
        """Whether the harness is blocked on a human (:func:`blocked_on_human`)."""
        return blocked_on_human(self.blocked_on)

    def stale_at_ms(self) -> int | None:
        """When the observation's record goes stale by age alone, or None: it already did, or
        no record stamp was trusted."""
        if self.reason == REASON_STALE or self.observed_at_ms is None:
            return None
        return self.observed_at_ms + HARNESS_STATE_STALE_MS


def blocked_on_human(blocked_on: object) -> bool:
    """The blocked-on-human rule: a ``blockedOn`` word (an observation's, or a value a journal
    carried) that names a human."""
    return blocked_on == HUMAN


def _indeterminate(reason: str, record: Record | None = None, *, with_evidence: bool = True) -> ObservedState:
    """The single constructor for an indeterminate observation: every absence routes here, so no
    path derives ``idle`` (or anything definite) from missing evidence."""
    evidence = record if with_evidence else None
    return ObservedState(
        state=UNKNOWN,
        blocked_on=UNKNOWN,
        input_buffer=UNKNOWN,
        ask=UNKNOWN,
        harness=record.harness if record is not None else None,
        since_ms=None,
        reason=reason,
        exit=None,
        observed_at_ms=evidence.written_at_ms if evidence else None,
        seq=evidence.seq if evidence else None,
        transitions=evidence.transitions if evidence else None,
        incarnation=evidence.incarnation if evidence else None,
    )


def _probe(liveness: LivenessProbe, session: str) -> str:
    try:
        return liveness(session)
    except Exception:
        # A probe that fails proves nothing; unprovable evidence is never reported as death.
        return SESSION_INDETERMINATE


def read(data: bytes | None, now_ms: int, liveness: LivenessProbe | None = None,
         agent: str | None = None) -> ObservedState | None:
    """Project the record at ``now_ms``. ``None`` when there is no record. ``liveness`` is the
    optional same-host probe of the record's pty session; pass None for cross-host reads.
    ``agent`` is the seat (``<host>.<identity>``) whose directory held the record: a record
    naming another seat (neither ``agent`` nor its bare identity) is not this seat's
    observation and reads unknown (``foreign-agent``).
    Never raises."""
    if data is None:
        return None
    try:
        record = decode(data)
    except decoding.Malformed:
        return _indeterminate(REASON_MALFORMED)
    except Exception:  # never raise, whatever the bytes
        return _indeterminate(REASON_MALFORMED)
    if record.schema != SCHEMA:
        return _indeterminate(REASON_UNSUPPORTED_SCHEMA, record, with_evidence=False)
    if agent is not None and record.agent not in (agent, agent.partition(".")[2]):
        return _indeterminate(REASON_FOREIGN_AGENT, record, with_evidence=False)
    if record.written_at_ms > now_ms:
        if record.written_at_ms - now_ms > HARNESS_STATE_FUTURE_SKEW_MS:
            return _indeterminate(REASON_FUTURE_SKEW, record)
    elif now_ms - record.written_at_ms >= HARNESS_STATE_STALE_MS:
        return _indeterminate(REASON_STALE, record)
    if record.state == UNKNOWN:
        return _indeterminate(REASON_LITERAL_UNKNOWN, record)
    if record.state == ENDED and record.exit is None and record.reason == SUPERSEDED:
        # The claim placeholder is a fence, not an observation.
        return _indeterminate(REASON_CLAIMED, record)
    if record.state != ENDED and liveness is not None:
        if record.pty_session is None:
            return _indeterminate(REASON_UNFENCED, record)
        if _probe(liveness, record.pty_session) == SESSION_DEAD:
            return _indeterminate(REASON_SESSION_DEAD, record)
    return ObservedState(
        state=record.state,
        blocked_on=record.blocked_on,
        input_buffer=record.input_buffer,
        ask=record.ask,
        harness=record.harness,
        since_ms=record.since_ms,
        reason=record.reason,
        exit=record.exit,
        observed_at_ms=record.written_at_ms,
        seq=record.seq,
        transitions=record.transitions,
        incarnation=record.incarnation,
    )


def read_file(path: Path, now_ms: int, liveness: LivenessProbe | None = None,
              agent: str | None = None) -> ObservedState | None:
    """:func:`read` applied to a file. Only proven absence is absence: a file that exists but
    cannot be read is ``unknown`` with reason ``unreadable-record``."""
    try:
        data = read_bounded(path, RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError:
        return _indeterminate(REASON_UNREADABLE)
    return read(data, now_ms, liveness, agent)


def to_wire(observed: ObservedState | None) -> dict[str, Any] | None:
    """The roster's ``observedState`` object, in the original's field order, or None."""
    if observed is None:
        return None
    return {
        "state": observed.state,
        "blockedOn": observed.blocked_on,
        "inputBuffer": observed.input_buffer,
        "ask": observed.ask,
        "harness": observed.harness,
        "since": observed.since_ms,
        "reason": observed.reason,
        "exit": observed.exit,
    }


# --- writer -------------------------------------------------------------------------------------
#
# Ownership. Only the owning session's driver processes write. A session is named by its
# incarnation token and, once it has made the written relaunch claim, by the ownership sequence
# that claim minted (``seq``). A writer refuses a record whose ``seq`` is beyond its own (it is the
# straggler of a superseded session), a record of a foreign schema, bytes it cannot parse, and —
# when it holds no claimed sequence — a record carrying another session's token. Every write is
# serialized by ``.harness-state.lock`` and decided against the on-disk record, never a cache.
#
# Residual, stated: without the original's sequence-floor sidecar, a claim over bytes this version
# cannot parse restarts the sequence at one.

STAGING_NAME = "harness-state-staging"


def session_token() -> str:
    """A process-unique incarnation token (pid, wall time, random suffix)."""
    import os
    import secrets
    import time

    return f"{os.getpid()}-{time.time_ns() // 1_000_000}-{secrets.token_hex(3)}"


def exit_description(returncode: int) -> str:
    """The ``exit`` word of a terminal record from a subprocess return code: ``exit <n>`` or,
    for a negative code (killed by a signal), ``signal <n>``."""
    return f"signal {-returncode}" if returncode < 0 else f"exit {returncode}"


def _next_stamp(on_disk: Record | None, now_ms: int) -> int:
    """Strictly beyond a trusted on-disk stamp (every landed write byte-distinct); a stamp beyond
    the future-skew bound is never inherited — the writer's clock wins."""
    if on_disk is not None and on_disk.written_at_ms <= now_ms + HARNESS_STATE_FUTURE_SKEW_MS:
        return max(now_ms, on_disk.written_at_ms + 1)
    return now_ms


_ABSENT = object()
_UNREADABLE = object()


def _stored(path: Path):
    """The on-disk record, or ``_ABSENT`` (proven absence only), or ``_UNREADABLE``."""
    try:
        data = read_bounded(path, RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return _ABSENT
    except OSError:
        return _UNREADABLE
    try:
        return decode(data)
    except Exception:
        return _UNREADABLE


def _encode(record: Record) -> bytes:
    import json

    return json.dumps(record.to_json(), separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def _publish(seat_dir: Path, record: Record) -> None:
    from st2.records.placement import publish_record

    publish_record(seat_dir, RECORD_NAME, _encode(record), STAGING_NAME, mode=0o600)


def _locked(seat_dir: Path):
    from st2.fs.lock import record_lock

    return record_lock(os.path.join(seat_dir, RECORD_NAME))


class Writer:
    """A driver process's writer over one seat's observed state."""

    def __init__(self, seat_dir: Path, agent: str, harness: str, clock, *, pty_session: str | None = None,
                 incarnation: str | None = None, claimed_seq: int | None = None) -> None:
        self.seat_dir = seat_dir
        self.agent = agent
        self.harness = harness
        self.clock = clock
        self.pty_session = pty_session
        self.incarnation = incarnation if incarnation is not None else session_token()
        self.claimed_seq = claimed_seq
        self.interrupted = False
        self.blind = False

    def lose_sight(self) -> None:
        """The observer lost its harness: stop heartbeating (the record ages to ``unknown``
        instead of being kept fresh), and make the next observation a new transition."""
        self.blind = True
        self.interrupted = True

    def observe(self, state: str, blocked_on: str = "none", input_buffer: str = "unknown", ask: str = "none",
                reason: str | None = None, exit: str | None = None, over_claim: bool = False) -> bool:
        """Record an observation; return whether a write landed. A change writes at once with a
        fresh ``sinceMs``; a restated tuple only once HARNESS_STATE_REFRESH is due; ``over_claim``
        only over this session's own claim. Raise ValueError for ``unknown`` or any unknown word."""
        if state not in STATES:
            raise ValueError(f"state {state!r} cannot be written ({UNKNOWN} is derived, never written)")
        if blocked_on not in BLOCKED_ON or input_buffer not in INPUT_BUFFERS or ask not in ASKS:
            raise ValueError("blockedOn, inputBuffer and ask must be written vocabulary words")
        if ask != "none" and blocked_on != "human":
            raise ValueError("an ask kind is meaningful only while blocked on a human")
        if state != ENDED and self.pty_session is None:
            raise ValueError("a live observation needs a pty session to vouch for it")
        with _locked(self.seat_dir):
            stored = _stored(os.path.join(self.seat_dir, RECORD_NAME))
            if stored is _UNREADABLE:
                return False  # somebody's record: only the written claim supersedes it
            on_disk: Record | None = None if stored is _ABSENT else stored
            if self.claimed_seq is not None:
                seq = self.claimed_seq
            elif on_disk is None:
                seq = 1
            elif on_disk.incarnation == self.incarnation:
                seq = on_disk.seq
            else:
                return False  # another session's record, and this writer holds no claim
            if on_disk is not None and (on_disk.seq > seq or on_disk.schema != SCHEMA):
                return False  # a later session's record, or one this version does not own
            self.claimed_seq = seq
            own = on_disk if on_disk is not None and on_disk.incarnation == self.incarnation else None
            if over_claim and (own is None or (own.state, own.reason, own.exit) != (ENDED, SUPERSEDED, None)):
                return False  # the session was observed already (a hook): that observation stands
            if own is not None and own.state == ENDED and own.reason != SUPERSEDED and state != ENDED:
                # The session's terminal record is final: a hook that fires after the wrapper
                # wrote it (checked here, under the same lock as the write) never revives it.
                return False
            now_ms = self.clock.wall_ms()
            unchanged = (
                not self.interrupted and own is not None
                and (own.state, own.blocked_on, own.input_buffer, own.ask, own.reason, own.exit)
                == (state, blocked_on, input_buffer, ask, reason, exit)
            )
            if (unchanged and own.written_at_ms <= now_ms + HARNESS_STATE_FUTURE_SKEW_MS
                    and now_ms - own.written_at_ms < HARNESS_STATE_REFRESH_MS):
                return False
            written_at_ms = _next_stamp(on_disk, now_ms)
            if own is not None and unchanged:
                since_ms, transitions = own.since_ms, own.transitions
            else:
                since_ms = written_at_ms
                transitions = on_disk.transitions + 1 if on_disk is not None else 0
            _publish(self.seat_dir, Record(
                schema=SCHEMA, agent=self.agent, harness=self.harness, state=state, blocked_on=blocked_on,
                input_buffer=input_buffer, ask=ask, reason=reason, exit=exit,
                pty_session=self.pty_session, incarnation=self.incarnation, seq=seq, since_ms=since_ms,
                written_at_ms=written_at_ms, transitions=transitions,
            ))
            self.interrupted = False
            self.blind = False
            return True

    def heartbeat(self) -> bool:
        """Re-stamp this session's live record once HARNESS_STATE_REFRESH is due. Never
        re-stamps a terminal record, another session's record, or anything while blind."""
        if self.blind:
            return False
        with _locked(self.seat_dir):
            stored = _stored(os.path.join(self.seat_dir, RECORD_NAME))
            if stored is _ABSENT or stored is _UNREADABLE:
                return False
            current: Record = stored
            if current.schema != SCHEMA or current.state == ENDED or current.incarnation != self.incarnation:
                return False
            now_ms = self.clock.wall_ms()
            trusted = current.written_at_ms <= now_ms + HARNESS_STATE_FUTURE_SKEW_MS
            if trusted and now_ms - current.written_at_ms < HARNESS_STATE_REFRESH_MS:
                return False
            _publish(self.seat_dir, current._replace(written_at_ms=_next_stamp(current, now_ms)))
            return True

    def ended(self, exit: str) -> bool:
        """Write this session's terminal record, carrying the real exit (``exit 0``,
        ``signal 9``): see :func:`exit_description`."""
        return self.observe(ENDED, "none", "unknown", exit=exit)


def claim(seat_dir: Path, agent: str, harness: str, token: str, clock) -> int:
    """The relaunch claim, a written act under the record's lock: supersede whatever is on disk
    with ``ended``/``superseded`` (no exit) under the new session's token and the next ownership
    sequence, then remove ``harness-context`` so a reader sees "no context yet" rather than the
    previous session's fill. Returns the claimed sequence for the session to adopt
    (``Writer(..., incarnation=token, claimed_seq=seq)``). Lock order is state -> context."""
    import logging

    from st2.records import harness_context

    with _locked(seat_dir):
        stored = _stored(os.path.join(seat_dir, RECORD_NAME))
        on_disk: Record | None = stored if isinstance(stored, Record) else None
        seq = on_disk.seq + 1 if on_disk is not None else 1
        written_at_ms = _next_stamp(on_disk, clock.wall_ms())
        _publish(seat_dir, Record(
            schema=SCHEMA, agent=agent, harness=harness, state=ENDED, blocked_on="none", input_buffer="unknown",
            ask="none", reason=SUPERSEDED, exit=None, pty_session=None, incarnation=token, seq=seq,
            since_ms=written_at_ms, written_at_ms=written_at_ms,
            transitions=on_disk.transitions + 1 if on_disk is not None else 0,
        ))
        try:
            harness_context.remove(seat_dir)
        except OSError as error:
            logging.getLogger("st2.records").warning("st2 harness-state: clearing harness-context failed: %s", error)
    return seq
