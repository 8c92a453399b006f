"""The Codex control state: what the wrapper knows about its thread, one transition function over
it, its projection onto harness-state (docs/drivers.md §Control state), and its persisted record with the
production reader the wrapper uses on restart (docs/drivers.md §Control state).

Derived phase (:func:`phase`) — ``HELD`` is the delivery predicate and never published::

    AWAITING_STATUS   no thread status seen yet
    IDLE              status idle, no live turn              -> turn/start
    ACTIVE            status active, exactly one live turn   -> turn/steer (the only steerable phase)
    HELD(reason)      compaction | review | notLoaded | systemError | activeWithoutTurn |
                      conflictingTurn | blockedOnHuman       -> delivery waits

Projection (:func:`project`), faithful to what Codex reported:

=====================  =======================================================================
control state          harness-state
=====================  =======================================================================
awaiting status        nothing published
notLoaded, systemError unknown — never written: the writer stops heartbeating (lose_sight)
idle                   idle
active, one turn       active
activeWithoutTurn      active (Codex said active; st2 merely cannot name the turn)
conflictingTurn        active (two turns believed live: maximally active)
compaction             active
review                 active, blockedOn human, ask review
activeFlags waitingOnApproval / a pending approval request        blockedOn human, ask permission
activeFlags waitingOnUserInput / a pending requestUserInput       blockedOn human, ask question
=====================  =======================================================================

``serverRequest/resolved`` removes the pending request; activeFlags are level-triggered and
replaced by every status. 0.171.0 does populate them: the lab capture shows
``["waitingOnApproval"]`` around an approval request.

The record ``st2.codex-control-state.v1`` (host-local, ``<scope>/codex/<runtime-id>/control-state.json``,
0600, atomic) is rewritten on every change, for an operator reading what the wrapper believed. It
has no production reader: which thread a relaunch resumes is the resumable-session record's
(:mod:`st2.runtime.resume`), which survives the runtime scope's removal; a successor
never projects a predecessor's status, turns, flags or pending requests (they describe an
app-server that died with it) and starts from AWAITING_STATUS, learning the live status from
``thread/resume``.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from st2.runtime import layout

SCHEMA = "st2.codex-control-state.v1"


class Phase(enum.Enum):
    AWAITING_STATUS = "awaitingStatus"
    IDLE = "idle"
    ACTIVE = "active"
    HELD = "held"


class Event(enum.Enum):
    BOUND = "bound"                    # thread/start or thread/resume answered: thread id
    STATUS = "status"                  # thread/status/changed (or a thread object's status)
    TURN_STARTED = "turnStarted"
    TURN_COMPLETED = "turnCompleted"
    COMPACTION_STARTED = "compactionStarted"
    COMPACTION_COMPLETED = "compactionCompleted"
    REVIEW_STARTED = "reviewStarted"
    REVIEW_ENDED = "reviewEnded"
    REQUEST_OPENED = "requestOpened"   # a human-resolved server request: id, ask
    REQUEST_RESOLVED = "requestResolved"


STATUSES = ("awaitingStatus", "idle", "active", "notLoaded", "systemError")
FLAG_ASKS = {"waitingOnApproval": "permission", "waitingOnUserInput": "question"}


@dataclass(frozen=True)
class ControlState:
    thread_id: str | None = None
    status: str = "awaitingStatus"
    active_flags: tuple[str, ...] = ()
    turns: tuple[str, ...] = ()
    compaction: bool = False
    review: bool = False
    pending: tuple[tuple[str, str], ...] = ()   # (request id as text, ask)


def transition(state: ControlState, event: Event, value: Any = None, ask: str | None = None) -> ControlState:
    """The one transition function; an event it cannot use leaves the state unchanged."""
    if event is Event.BOUND and isinstance(value, str):
        return replace(ControlState(), thread_id=value)                        # -> awaiting status
    if event is Event.STATUS and isinstance(value, dict):
        kind = value.get("type")
        if kind not in STATUSES:
            kind = "systemError" if kind is not None else state.status
        flags = value.get("activeFlags") if kind == "active" else []
        flags = tuple(flag for flag in flags if isinstance(flag, str)) if isinstance(flags, list) else ()
        turns = () if kind == "idle" else state.turns
        return replace(state, status=kind, active_flags=flags, turns=turns,
                       compaction=state.compaction and kind != "idle", review=state.review and kind != "idle")
    if event is Event.TURN_STARTED and isinstance(value, str) and value not in state.turns:
        return replace(state, turns=state.turns + (value,))
    if event is Event.TURN_COMPLETED and isinstance(value, str):
        return replace(state, turns=tuple(turn for turn in state.turns if turn != value), compaction=False)
    if event is Event.COMPACTION_STARTED:
        return replace(state, compaction=True)
    if event is Event.COMPACTION_COMPLETED:
        return replace(state, compaction=False)
    if event is Event.REVIEW_STARTED:
        return replace(state, review=True)
    if event is Event.REVIEW_ENDED:
        return replace(state, review=False)
    if event is Event.REQUEST_OPENED and value is not None and ask in ("permission", "question"):
        key = str(value)
        return replace(state, pending=tuple(item for item in state.pending if item[0] != key) + ((key, ask),))
    if event is Event.REQUEST_RESOLVED and value is not None:
        return replace(state, pending=tuple(item for item in state.pending if item[0] != str(value)))
    return state


def blocked_ask(state: ControlState) -> str | None:
    """The human ask holding the thread, or None: pending requests first, then the flags."""
    if state.pending:
        return state.pending[-1][1]
    for flag in state.active_flags:
        if flag in FLAG_ASKS:
            return FLAG_ASKS[flag]
    return None


def phase(state: ControlState) -> tuple[Phase, str | None]:
    """``(phase, hold reason)``; ACTIVE is the only phase that permits turn/steer."""
    if state.status == "awaitingStatus":
        return Phase.AWAITING_STATUS, None
    if state.status in ("notLoaded", "systemError"):
        return Phase.HELD, state.status
    if state.status == "idle" and not state.turns:
        return Phase.IDLE, None
    if state.review:
        return Phase.HELD, "review"
    if state.compaction:
        return Phase.HELD, "compaction"
    if blocked_ask(state) is not None:
        return Phase.HELD, "blockedOnHuman"
    if not state.turns:
        return Phase.HELD, "activeWithoutTurn"
    if len(state.turns) > 1:
        return Phase.HELD, "conflictingTurn"
    return Phase.ACTIVE, None


def startable(state: ControlState) -> bool:
    """Whether a new turn may be started: idle, or — measured on 0.171.0 in the lab — the
    ``systemError`` a failed turn leaves behind with no live turn, which Codex leaves only when
    the next ``turn/start`` is accepted (it is, and the status returns to active)."""
    current, _ = phase(state)
    return current is Phase.IDLE or (state.status == "systemError" and not state.turns and not state.pending)


@dataclass(frozen=True)
class Projection:
    state: str
    blocked_on: str = "none"
    ask: str = "none"
    reason: str | None = None


def project(state: ControlState) -> Projection | None:
    """The harness-state observation to publish (table in the module docstring); None means
    publish nothing (awaiting status) and :data:`UNKNOWN` means stop heartbeating."""
    current, reason = phase(state)
    if current is Phase.AWAITING_STATUS:
        return None
    if state.status in ("notLoaded", "systemError"):
        return UNKNOWN
    if current is Phase.IDLE:
        return Projection("idle")
    if state.review:
        return Projection("active", "human", "review", "review")
    ask = blocked_ask(state)
    if ask is not None:
        return Projection("active", "human", ask, None)
    if reason in ("compaction", "activeWithoutTurn", "conflictingTurn"):
        return Projection("active", reason=reason)
    return Projection("active")


UNKNOWN = Projection("unknown")


# --- the record --------------------------------------------------------------------------------


def encode(state: ControlState, agent: str, runtime_id: str, incarnation: str, written_at_ms: int) -> bytes:
    body = {"schema": SCHEMA, "agent": agent, "runtimeId": runtime_id, "incarnation": incarnation,
            "threadId": state.thread_id, "status": state.status, "activeFlags": list(state.active_flags),
            "turns": list(state.turns), "compaction": state.compaction, "review": state.review,
            "pendingRequests": [{"id": key, "ask": ask} for key, ask in state.pending],
            "writtenAtMs": written_at_ms}
    return (json.dumps(body, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


@dataclass
class ControlStore:
    path: Path
    staging: Path
    agent: str
    runtime_id: str
    incarnation: str
    last: bytes | None = field(default=None, repr=False)

    def save(self, state: ControlState, now_ms: int) -> bool:
        """Publish ``state`` atomically when it changed; return whether a write landed."""
        from st2.fs.atomic import ensure_directory, publish

        body = encode(state, self.agent, self.runtime_id, self.incarnation, 0)
        if body == self.last:
            return False
        ensure_directory(self.path.parent, mode=0o700)
        ensure_directory(self.staging, mode=0o700)
        publish(self.path, encode(state, self.agent, self.runtime_id, self.incarnation, now_ms), self.staging,
                mode=0o600)
        self.last = body
        return True


def store_paths(scope_directory: Path, runtime_id: str) -> Path:
    return layout.codex_control_record(Path(scope_directory), runtime_id)
