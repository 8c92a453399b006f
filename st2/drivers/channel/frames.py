"""The channel consumer: frames from st2's pi / omp extension (``hooks/st2-channel.ts``) into the
seat's ``harness-context`` and ``harness-state`` records (and its ``driver-diagnostic``'s
``providerAuth`` stage). Shared by the pi and omp wrappers — omp
is pi's fork and speaks the same extension wire; what each harness's numbers mean is decided by
its own extension, and pinned by the fixtures over its captures.

The wire: one JSON object per line, at most :data:`FRAME_LIMIT` bytes::

    {"type":"context","event":E,"reading":{"tokens","contextWindow","percent","model","costUsd"},
     "compaction":null | {"trigger":W,"count":N | null}}
    {"type":"state","event":E,"state":"idle"|"active","blockedOn":"none"|"human","ask":"none"|"permission"}
    {"type":"session","event":E,"sessionFile":F | null}
    {"type":"turn","event":E,"result":"ordinary"|"credentialRejected"|"failed"}

A session frame names the file the harness keeps the conversation in; the consumer
hands a non-null one to its ``session`` callback (the wrapper records it for a relaunch to resume).

A turn frame is how a run of the agent ended, as the harness's own typed result says it:
``ordinary`` (it settled on an assistant reply), ``credentialRejected`` (the harness typed the
failure as the provider rejecting the credential, and as nothing else), ``failed`` (any other
error or an abort). The consumer turns it into the seat's ``providerAuth`` driver diagnostic
(docs/records.md §Driver diagnostic) through its ``diagnostics`` publisher: ``credentialRejected``
publishes the stage, ``ordinary`` clears it, ``failed`` touches nothing. Only omp's extension sends
it (omp 18.2.3 types a turn's error as a bit set, ``AssistantMessage.errorId``: the class bit plus
``AuthFailed`` alone is ``credentialRejected``; hooks/omp-channel.ts); pi 0.73.1 carries its
errors as prose only, so pi's sends none. No prose, status text or message rides the frame.

Decoding is conservative (:func:`decode`): a frame is applied whole or not at all. Not JSON, not
an object, an unknown ``type``, a reading missing any of its five keys, a number of the wrong kind
(a float token count, a negative or non-finite value, a boolean), a state word outside the
vocabulary (a turn result included): :class:`Malformed`, nothing written, one diagnostic. Unknown extra keys are tolerated
(additive). A trigger word the record does not know is carried to the writer, which reads it as
``unknown``. A line longer than the limit is discarded whole, up to its newline.

Standard library only.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from st2.records import harness_context

FRAME_LIMIT = 4096
"""A frame's largest size in bytes, newline included: one write below PIPE_BUF, never torn."""
READING_KEYS = ("tokens", "contextWindow", "percent", "model", "costUsd")
TEXT_LIMIT = 256
STATES = ("idle", "active")
BLOCKED_ON = ("none", "human")
ASKS = ("none", "permission")
TURN_RESULTS = ("ordinary", "credentialRejected", "failed")
DIAGNOSTIC_LOG_LIMIT = 64 * 1024


class Malformed(ValueError):
    """A frame that does not decode as the wire above; the message says why."""


@dataclass(frozen=True)
class ContextFrame:
    event: str | None
    reading: harness_context.Reading | None
    edge: harness_context.CompactionEdge | None


@dataclass(frozen=True)
class SessionFrame:
    event: str | None
    session_file: str | None


SESSION_FILE_LIMIT = FRAME_LIMIT // 2


@dataclass(frozen=True)
class TurnFrame:
    event: str | None
    result: str


@dataclass(frozen=True)
class StateFrame:
    event: str | None
    state: str
    blocked_on: str
    ask: str


def _count(value: Any, name: str, *, positive: bool = False) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < (1 if positive else 0):
        raise Malformed(f"{name} must be a {'positive' if positive else 'non-negative'} integer or null")
    return value


def _number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise Malformed(f"{name} must be a finite non-negative number or null")
    return float(value)


def _text(value: Any, name: str, *, optional: bool = True) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > TEXT_LIMIT or not value.isprintable():
        raise Malformed(f"{name} must be a short printable string{' or null' if optional else ''}")
    return value


def _reading(value: Any) -> harness_context.Reading:
    if not isinstance(value, dict):
        raise Malformed("reading must be an object")
    missing = [key for key in READING_KEYS if key not in value]
    if missing:
        raise Malformed(f"reading lacks {', '.join(missing)}")
    return harness_context.Reading(
        used_tokens=_count(value["tokens"], "tokens"),
        window_tokens=_count(value["contextWindow"], "contextWindow", positive=True),
        used_percent=_number(value["percent"], "percent"),
        model=_text(value["model"], "model"),
        cost_usd=_number(value["costUsd"], "costUsd"),
    )


def _edge(value: Any) -> harness_context.CompactionEdge | None:
    if value is None:
        return None
    if not isinstance(value, dict) or "trigger" not in value or "count" not in value:
        raise Malformed("compaction must be null or an object with trigger and count")
    trigger = _text(value["trigger"], "trigger", optional=False)
    return harness_context.CompactionEdge(trigger=trigger, count=_count(value["count"], "count"))


def _word(value: Any, name: str, vocabulary: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in vocabulary:
        raise Malformed(f"{name} must be one of {', '.join(vocabulary)}")
    return value


Frame = ContextFrame | StateFrame | SessionFrame | TurnFrame


def decode(line: bytes) -> Frame:
    """One frame from one line (without its newline). Raise :class:`Malformed`."""
    if len(line) >= FRAME_LIMIT:
        raise Malformed(f"frame of {len(line)} bytes exceeds {FRAME_LIMIT}")
    try:
        value = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Malformed("not a JSON document") from None
    if not isinstance(value, dict):
        raise Malformed("not a JSON object")
    event = value.get("event")
    event = _text(event, "event") if event is not None else None
    kind = value.get("type")
    if kind == "context":
        if "reading" not in value or "compaction" not in value:
            raise Malformed("a context frame carries reading and compaction")
        edge = _edge(value["compaction"])
        if value["reading"] is None and edge is None:
            raise Malformed("a context frame without a reading carries a compaction")
        reading = _reading(value["reading"]) if value["reading"] is not None else None
        return ContextFrame(event, reading, edge)
    if kind == "state":
        blocked_on = _word(value.get("blockedOn"), "blockedOn", BLOCKED_ON)
        ask = _word(value.get("ask"), "ask", ASKS)
        if ask != "none" and blocked_on != "human":
            raise Malformed("an ask is meaningful only while blocked on a human")
        return StateFrame(event, _word(value.get("state"), "state", STATES), blocked_on, ask)
    if kind == "session":
        if "sessionFile" not in value:
            raise Malformed("a session frame carries sessionFile")
        session_file = value["sessionFile"]
        if session_file is not None and (not isinstance(session_file, str) or not session_file.startswith("/")
                                         or len(session_file) > SESSION_FILE_LIMIT or "\0" in session_file):
            raise Malformed("sessionFile must be null or an absolute path")
        return SessionFrame(event, session_file)
    if kind == "turn":
        return TurnFrame(event, _word(value.get("result"), "result", TURN_RESULTS))
    raise Malformed("type must be context, state, session or turn")


class Consumer:
    """Turns channel bytes into record writes. ``context`` is a
    :class:`~st2.records.harness_context.Writer`, ``state`` a harness-state ``Writer``,
    ``diagnose`` receives one line per malformed frame, ``session`` (optional) each session
    file named (returning whether it was recorded), ``diagnostics`` (optional) the wrapper's
    :class:`~st2.records.driver_diagnostic.Publisher`, which turn frames publish and clear
    ``providerAuth`` through. Nothing raised by a writer or a frame escapes :meth:`feed`: the
    wrapper's loop must outlive any input."""

    def __init__(self, context, state, diagnose: Callable[[str], None],
                 session: Callable[[str], None] | None = None, diagnostics=None) -> None:
        self.context = context
        self.state = state
        self.session = session
        self.diagnostics = diagnostics
        self.diagnose = diagnose
        self.buffer = bytearray()
        self.discarding = False
        self.applied = 0
        self.malformed = 0

    def feed(self, data: bytes) -> list[list[str]]:
        """Apply every complete frame in ``data`` (after what was buffered); return, per frame,
        the records it wrote."""
        results: list[list[str]] = []
        self.buffer.extend(data)
        while True:
            newline = self.buffer.find(b"\n")
            if newline < 0:
                if len(self.buffer) >= FRAME_LIMIT:
                    if not self.discarding:
                        self._reject(f"frame exceeds {FRAME_LIMIT} bytes")
                    self.buffer.clear()  # bounded: an overlong frame is never held whole
                    self.discarding = True
                return results
            line = bytes(self.buffer[:newline])
            del self.buffer[:newline + 1]
            if self.discarding:  # the tail of an overlong frame
                self.discarding = False
                continue
            results.append(self.line(line))

    def finish(self) -> None:
        """The channel closed: a partial frame left in the buffer is malformed."""
        if self.buffer and not self.discarding:
            self._reject("a partial frame at the end of the channel")
        self.buffer.clear()
        self.discarding = False

    def line(self, line: bytes) -> list[str]:
        """Decode and apply one line; return the records written."""
        if not line.strip():
            return []
        try:
            frame = decode(line)
        except Malformed as error:
            self._reject(str(error))
            return []
        try:
            written = self.apply(frame)
        except Exception as error:  # a writer's failure is a diagnostic, never the loop's end
            self.diagnose(f"applying a {type(frame).__name__} failed: {error}")
            return []
        self.applied += 1
        return written

    def apply(self, frame: Frame) -> list[str]:
        if isinstance(frame, TurnFrame):
            return ["driver-diagnostic"] if self._turn(frame.result) else []
        if isinstance(frame, SessionFrame):
            if frame.session_file is not None and self.session is not None and self.session(frame.session_file):
                return ["resumable-session"]
            return []
        if isinstance(frame, ContextFrame):
            return ["harness-context"] if self.context.publish(frame.reading, frame.edge) else []
        return ["harness-state"] if self.state.observe(frame.state, frame.blocked_on, "unknown", frame.ask) else []

    def _turn(self, result: str) -> bool:
        """``providerAuth`` from a turn's typed result: published on a rejected credential,
        cleared by an ordinary end, untouched by any other failure. Whether the record changed."""
        if self.diagnostics is None:
            return False
        if result == "credentialRejected":
            return self.diagnostics.publish("providerAuth", "providerAuthRejected", "turnResult")
        if result == "ordinary":
            return self.diagnostics.clear("providerAuth")
        return False

    def _reject(self, reason: str) -> None:
        self.malformed += 1
        self.diagnose(f"malformed frame dropped: {reason}")


class DiagnosticLog:
    """A bounded diagnostics file in host-local state (never in the catalog, never on the PTY,
    where it would scribble over the harness's screen): past :data:`DIAGNOSTIC_LOG_LIMIT` bytes
    the file becomes ``<name>.1`` (one generation kept) and a new one starts."""

    def __init__(self, path: Path, clock, limit: int = DIAGNOSTIC_LOG_LIMIT) -> None:
        self.path = Path(path)
        self.clock = clock
        self.limit = limit

    def __call__(self, message: str) -> None:
        import os

        line = f"{self.clock.wall_ms()} {message}\n".encode("utf-8", "replace")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            try:
                if self.path.stat().st_size + len(line) > self.limit:
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
            except FileNotFoundError:
                pass
            descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.write(descriptor, line)
            finally:
                os.close(descriptor)
        except OSError:
            pass  # diagnostics are best effort; the session goes on
