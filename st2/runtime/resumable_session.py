"""The resumable-session record: which harness session a seat's incarnation runs, as its driver
observed it, so a relaunch after a crash or a reboot resumes that conversation (docs/records.md
§Resumable session).

Where: host-local durable state, **not** the runtime scope. The runtime scope
(``<state>/st2/scopes/<digest>/<host>/``, :mod:`st2.runtime.scope`) holds what a reboot makes
meaningless — launch records naming dead PIDs, tmux sockets, park markers — and a simulated
reboot removes it whole. Its sibling ``<state>/st2/sessions/<digest>/<host>/`` (same digest and
host directory names as the scope, found through the same catalog pointer, so every environment
names one store) holds:

- ``<runtime-id>.json``  the record, ``st2.resumable-session.v1`` (below)
- ``<runtime-id>.down``  the stop marker ``st2 down`` leaves (``st2.session-stop.v1``): the next
                         launch starts fresh; consumed by that launch; ``st2 up --resume`` removes
                         it first, so the recorded session is resumed after all
- ``.<runtime-id>.json.lock``  the record's ``flock`` (never deleted)
- ``staging/``           staging for atomic publication

Wire shape, field order fixed::

    {"schema":"st2.resumable-session.v1","runtimeId":R,"agent":"<host>.<identity>",
     "harness":H,"incarnation":T,"start":"fresh"|"resuming"|"resumed"|"fallback",
     "sessionId":S|null,"resumedFrom":S|null,
     "lost":[{"sessionId":S,"incarnation":T,"lostAtMs":ms},…],"writtenAtMs":ms}

``incarnation`` is the wrapper's session token (the harness-state claim's), the fence: a driver
process publishes "seat R incarnation T observed harness session S" only while the record names
T (:func:`st2.runtime.resume.observe`), so a straggler of an older incarnation never rebinds the
seat. ``sessionId`` is the harness's own identity of the conversation (Claude's ``session_id``,
pi/omp's session file, Codex's thread id, opencode's session id) and is only ever what a driver
observed or the id it was told to resume — never inferred from "the most recent session in this
directory". ``lost`` keeps (bounded, newest last) every id a resume was refused for, for an
operator; a lost id is never resumed again.

Reading is strict and bounded (:func:`st2.fs.read.read_bounded`, the strict JSON decoder): bytes
that are not exactly a record of this schema for this runtime id, or whose ``agent`` names another
seat (the harness-state record's fence: neither the seat nor its bare identity; without a seat
given, one whose runtime id is not this one or one of its tasks), or any of whose strings holds a
non-printable character (a control, escape or bidi character), read as **absent** (the next
launch starts fresh and rewrites it), never as a session to resume. Standard library only (hot
paths — Claude's hooks — import it).
"""

from __future__ import annotations

import json
import os
from collections import namedtuple
from pathlib import Path

from st2.fs.atomic import ensure_directory, ensure_real_directory, publish
from st2.fs.read import RUNTIME_LIMIT, read_optional
from st2.records.decoding import Malformed, load_object
from st2.runtime import layout

SCHEMA = "st2.resumable-session.v1"
STOP_SCHEMA = "st2.session-stop.v1"

FRESH, RESUMING, RESUMED, FALLBACK = "fresh", "resuming", "resumed", "fallback"
STARTS: tuple[str, ...] = (FRESH, RESUMING, RESUMED, FALLBACK)
LOST_LIMIT = 8
"""At most this many lost ids are kept per seat (the oldest dropped first)."""
SESSION_ID_MAX_CHARS = 4096  # a pi session file's path is the longest identity


# namedtuple classes, not dataclasses (a dataclass costs about a millisecond to define, st2.declarations.model
# measures the same) nor typing.NamedTuple (importing typing costs more): Claude's hooks import this module.
class Lost(namedtuple("Lost", ("session_id", "incarnation", "lost_at_ms"))):
    __slots__ = ()
    session_id: str
    incarnation: str
    lost_at_ms: int

    def wire(self) -> dict:
        return {"sessionId": self.session_id, "incarnation": self.incarnation, "lostAtMs": self.lost_at_ms}


class SessionRecord(namedtuple("SessionRecord", ("runtime_id", "agent", "harness", "incarnation", "start", "session_id",
                                                 "resumed_from", "lost", "written_at_ms"), defaults=(None, None, (), 0))):
    __slots__ = ()
    runtime_id: str
    agent: str
    harness: str
    incarnation: str
    start: str
    session_id: str | None  # = None
    resumed_from: str | None  # = None
    lost: tuple[Lost, ...]  # = ()
    written_at_ms: int  # = 0

    def lost_ids(self) -> frozenset[str]:
        return frozenset(entry.session_id for entry in self.lost)

    def to_json(self) -> bytes:
        body = {
            "schema": SCHEMA, "runtimeId": self.runtime_id, "agent": self.agent, "harness": self.harness,
            "incarnation": self.incarnation, "start": self.start, "sessionId": self.session_id,
            "resumedFrom": self.resumed_from, "lost": [entry.wire() for entry in self.lost],
            "writtenAtMs": self.written_at_ms,
        }
        return json.dumps(body, separators=(",", ":")).encode() + b"\n"


class SessionStore(namedtuple("SessionStore", ("directory",))):
    """One catalog's store on one host (see the module docstring for the layout)."""

    __slots__ = ()
    directory: Path

    @classmethod
    def of(cls, catalog: Path, host: str, state_dir: Path | None = None) -> "SessionStore":
        """The store beside ``catalog``'s runtime scope on ``host``: the scope directory
        ``<base>/scopes/<digest>/<host>`` names ``<base>/sessions/<digest>/<host>``."""
        from st2.runtime.runtime_home import scope_directory

        return cls.beside(scope_directory(Path(catalog), host, state_dir))

    @classmethod
    def beside(cls, scope: Path) -> "SessionStore":
        """The store beside the runtime scope directory ``scope`` (``<base>/scopes/<digest>/<host>``)."""
        return cls(layout.session_store(scope))

    @classmethod
    def of_seat(cls, seat_directory: Path) -> "SessionStore":
        """The store of the seat directory ``<catalog>/agents/<host>/<identity>``."""
        seat_directory = Path(seat_directory)
        return cls.of(seat_directory.parents[2], seat_directory.parent.name)

    def record(self, runtime_id: str) -> Path:
        return layout.session_record(self.directory, runtime_id)

    def stop_marker(self, runtime_id: str) -> Path:
        return layout.session_stop_marker(self.directory, runtime_id)

    def lock(self, runtime_id: str) -> Path:
        return layout.session_lock(self.directory, runtime_id)

    @property
    def staging(self) -> Path:
        return layout.staging(self.directory)

    def ensure(self) -> None:
        ensure_directory(self.directory.parent, mode=0o700)
        ensure_real_directory(self.directory, mode=0o700)
        ensure_real_directory(self.staging, mode=0o700)

    def publish(self, target: Path, data: bytes) -> None:
        self.ensure()
        publish(target, data, self.staging, root=self.directory, mode=0o600)


def _text(value, name: str, optional: bool = False) -> str | None:
    """A non-empty, bounded, printable string (no harness id holds a control, escape or bidi
    character, and the roster, top and Doctor print these ids)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value or len(value) > SESSION_ID_MAX_CHARS or not value.isprintable():
        raise ValueError(f"{name} is not a non-empty printable string")
    return value


def _stamp(value, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} is not a non-negative integer")
    return value


def names_seat(recorded: str, runtime_id: str, agent: str | None) -> bool:
    """Whether a record's ``agent`` field ``recorded`` is the seat read for: ``agent``
    (``<host>.<identity>``) or its bare identity, as the harness-state reader fences; without
    ``agent``, the seat ``runtime_id`` is (itself, or a seat of which it is a task)."""
    if agent is not None:
        return recorded in (agent, agent.partition(".")[2])
    return runtime_id == recorded or runtime_id.startswith(recorded + ".")


def parse(data: bytes, runtime_id: str, agent: str | None = None) -> SessionRecord | None:
    """The record ``data`` holds for ``runtime_id``, or None when it is not exactly one (a foreign
    schema, another runtime id, another seat's (:func:`names_seat`), a wrong type, an unknown
    start word). Never raises."""
    try:
        body = load_object(data)
        if body.get("schema") != SCHEMA or body.get("runtimeId") != runtime_id:
            return None
        start = body.get("start")
        if start not in STARTS:
            return None
        lost = body.get("lost")
        if not isinstance(lost, list):
            return None
        entries = tuple(Lost(_text(entry.get("sessionId"), "lost sessionId"),
                             _text(entry.get("incarnation"), "lost incarnation"),
                             _stamp(entry.get("lostAtMs"), "lostAtMs"))
                        for entry in lost if isinstance(entry, dict))
        if len(entries) != len(lost):
            return None
        recorded = _text(body.get("agent"), "agent")
        if not names_seat(recorded, runtime_id, agent):
            return None
        return SessionRecord(
            runtime_id=runtime_id, agent=recorded,
            harness=_text(body.get("harness"), "harness"), incarnation=_text(body.get("incarnation"), "incarnation"),
            start=start, session_id=_text(body.get("sessionId"), "sessionId", optional=True),
            resumed_from=_text(body.get("resumedFrom"), "resumedFrom", optional=True),
            lost=entries[-LOST_LIMIT:], written_at_ms=_stamp(body.get("writtenAtMs"), "writtenAtMs"),
        )
    except (Malformed, ValueError, AttributeError, TypeError):
        return None


def read(store: SessionStore, runtime_id: str, agent: str | None = None) -> SessionRecord | None:
    """The record for ``runtime_id`` (of the seat ``agent`` when given); None when there is none,
    or it cannot be read or trusted (:func:`parse`)."""
    try:
        data = read_optional(store.record(runtime_id), RUNTIME_LIMIT, follow_symlinks=False)
    except OSError:
        return None
    return None if data is None else parse(data, runtime_id, agent)


def locked(store: SessionStore, runtime_id: str):
    """The record's cross-process lock (a context manager); every read-decide-write holds it."""
    from st2.fs.lock import RecordLock

    store.ensure()
    return RecordLock(store.lock(runtime_id))


def write(store: SessionStore, record: SessionRecord) -> None:
    """Publish ``record`` atomically (the caller holds :func:`locked`)."""
    store.publish(store.record(record.runtime_id), record.to_json())


# --- the stop marker ----------------------------------------------------------------------------


def mark_stopped(store: SessionStore, runtime_id: str, now_ms: int) -> None:
    """``st2 down`` stopped ``runtime_id`` on purpose: its next launch starts fresh."""
    body = {"schema": STOP_SCHEMA, "runtimeId": runtime_id, "stoppedAtMs": now_ms}
    store.publish(store.stop_marker(runtime_id), json.dumps(body, separators=(",", ":")).encode() + b"\n")


def stopped_by_down(store: SessionStore, runtime_id: str) -> bool:
    """Whether a stop marker is present. Any file there counts (a torn or foreign marker is still
    an operator's stop, and starting fresh loses nothing the record does not keep)."""
    return os.path.lexists(store.stop_marker(runtime_id))


def clear_stopped(store: SessionStore, runtime_id: str) -> bool:
    """Remove the stop marker; return whether there was one."""
    try:
        store.stop_marker(runtime_id).unlink()
        return True
    except FileNotFoundError:
        return False


def stopped_ids(store: SessionStore) -> list[str]:
    """The runtime ids with a stop marker (sorted); empty when the store does not exist."""
    try:
        names = sorted(path.name for path in store.directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [name[: -len(".down")] for name in names if name.endswith(".down") and not name.startswith(".")]
