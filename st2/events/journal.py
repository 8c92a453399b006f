"""The host-local fleet event journal: ``<runtime scope>/events/``.

* ``journal`` (the current segment) and ``journal.1`` (the previous one): append-only
  ``st2.fleet-event.v1`` lines (:mod:`st2.events.event`), each numbered by ``seq``, strictly
  increasing by one across both segments. Bounded by size: before an append would take the
  current segment past :data:`SEGMENT_BYTES` it becomes ``journal.1`` (replacing the older one),
  so the journal never holds more than two segments.
* ``state.json`` (``st2.fleet-event-state.v1``): the last projection the events were diffed from
  and the sequence number it covers, published atomically. A supervisor that restarts — even one
  SIGKILLed between an append and the state's publication — resumes from it and replays the
  journal lines past its ``seq``, so the next diff neither repeats a journaled transition nor
  skips one (no gap, no duplicate). Each append is fsynced before it returns, so no state ever
  covers a line a power loss could take.

Host-local (the runtime scope is never replicated): each host's supervisor journals what it
observes. One writer (the supervisor, under its per-host lock); any number of readers. A line
without its newline (a torn tail) is not an event: readers ignore it and the writer cuts it off
before its next append. A line that does not decode is skipped. Reads are bounded
(:func:`st2.fs.read.read_after`).

Hostile entries: the writer opens the current segment through :func:`st2.fs.read.open_regular`
(``O_NOFOLLOW | O_NONBLOCK``, ``fstat`` checked), so a FIFO, a symlink or a directory in its place
is refused with a located :class:`JournalRefused` — never waited on, never followed — and a
``state.json`` that is not one this writer wrote (a ``seq`` past :data:`st2.events.event.MAX_SEQ`
included) is refused (:class:`StateMalformed`), never continued from.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from st2.events import facets
from st2.events.event import MAX_SEQ, FleetEvent, NotAnEvent, parse_line
from st2.fs.read import JOURNAL_LIMIT, MIB, NotRegular, TooLarge, open_regular, read_after, read_optional
from st2.runtime import layout

CURRENT = layout.EVENTS_CURRENT
PREVIOUS = layout.EVENTS_PREVIOUS
STATE = layout.EVENTS_STATE
NOTIFY_LOG = layout.EVENTS_NOTIFY_LOG
STATE_SCHEMA = "st2.fleet-event-state.v1"
SEGMENT_BYTES = 1 * MIB
STATE_LIMIT = 16 * MIB  # a 627-seat projection is ~200 KB
assert SEGMENT_BYTES < JOURNAL_LIMIT


def directory_of(scope) -> Path:
    """The journal directory of a runtime scope (:class:`st2.runtime.scope.RuntimeScope`)."""
    return layout.events(scope.directory)


def split_lines(data: bytes) -> tuple[list[bytes], int]:
    """The complete lines of ``data`` and the byte count they span; a final piece without its
    newline (a torn tail, or a line still being written) is left out."""
    end = data.rfind(b"\n")
    if end < 0:
        return [], 0
    return data[:end].split(b"\n"), end + 1


def decode_lines(lines: list[bytes]) -> list[FleetEvent]:
    found = []
    for line in lines:
        if not line.strip():
            continue
        try:
            found.append(parse_line(line))
        except NotAnEvent:
            continue
    return found


def _segment(path: Path, refused: list[str] | None = None) -> list[FleetEvent]:
    """The events of one segment; an absent one has none. One present but not read — a FIFO, a
    symlink (never followed), a directory, unreadable, over the bound — has none either, and is
    named in ``refused`` (``"<path> <why>"``) when given. Opening never blocks (no FIFO wait)."""
    try:
        data, _ = read_after(path, 0, JOURNAL_LIMIT)
    except FileNotFoundError:
        return []
    except OSError as error:
        if refused is not None:
            refused.append(f"{path} {refusal(error)}")
        return []
    return decode_lines(split_lines(data)[0])


def refusal(error: OSError) -> str:
    """Why a segment was not read, in words: the reader's own refusal (``is a FIFO, not a
    regular file``, ``is a symlink``, ``has N bytes past 0, …``) or the OS's."""
    if isinstance(error, NotRegular) or isinstance(error, TooLarge):
        return error.strerror
    return f"cannot be read: {error.strerror or error}"


def read_all(directory: Path, refused: list[str] | None = None) -> list[FleetEvent]:
    """Every event both segments hold, in sequence order, each ``seq`` once. A segment present
    but not read is named in ``refused`` when given (see :func:`_segment`)."""
    seen: dict[int, FleetEvent] = {}
    for name in (PREVIOUS, CURRENT):
        for item in _segment(directory / name, refused):
            seen.setdefault(item.seq, item)
    return [seen[number] for number in sorted(seen)]


def exists(directory: Path) -> bool:
    """Whether the journal has any of its files, whatever their kind (a symlink, dangling or not,
    counts: it is never followed, and is reported rather than read as absent)."""
    return any(os.path.lexists(directory / name) for name in (CURRENT, PREVIOUS, STATE))


def segments_present(directory: Path) -> int:
    """How many of the two segments have an entry of any kind."""
    return sum(os.path.lexists(directory / name) for name in (CURRENT, PREVIOUS))


@dataclass
class Resumed:
    seq: int
    groups: dict[str, dict[str, object]] | None  # None: no projection to diff from (baseline)
    replayed: int = 0
    refused_state: str | None = None  # why a present state.json was not continued from


class StateMalformed(ValueError):
    """A ``state.json`` that is present but not one this writer wrote; its message says why,
    naming the path."""


def load_state(directory: Path) -> tuple[int, dict[str, dict[str, object]]] | None:
    """``(seq, groups)`` of ``state.json``, or None when absent. Raise :class:`StateMalformed`
    for one present but not read or not one this writer wrote (not a regular file, not a
    ``st2.fleet-event-state.v1`` object, a ``seq`` that is not an integer from 0 to
    :data:`st2.events.event.MAX_SEQ`): never continued from."""
    from st2.records.decoding import Malformed, load_object

    path = directory / STATE
    try:
        data = read_optional(path, STATE_LIMIT, follow_symlinks=False)
    except OSError as error:
        raise StateMalformed(f"the event state {path} {refusal(error)}") from error
    if data is None:
        return None
    try:
        body = load_object(data)
    except Malformed as error:
        raise StateMalformed(f"the event state {path} does not decode ({error})") from error
    seq, groups = body.get("seq"), body.get("groups")
    if body.get("schema") != STATE_SCHEMA or not isinstance(groups, dict) or not all(
            isinstance(group, dict) for group in groups.values()):
        raise StateMalformed(f"the event state {path} is not a {STATE_SCHEMA} object")
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        raise StateMalformed(f"the event state {path} has seq {_clipped(seq)}, not an integer from 0 to {MAX_SEQ}")
    return seq, groups


def _clipped(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:40] + "…"


def subject_of(item: FleetEvent) -> str:
    if item.kind == "parked":
        return str(item.evidence.get("task") or "")
    if item.kind == "stale":
        return str(item.evidence.get("record") or "")
    return ""


def apply(groups: dict[str, dict[str, object]], item: FleetEvent) -> None:
    """Carry one journaled transition into a projection: its key now holds its ``to``."""
    group = groups.setdefault(facets.group_of(item.kind, item.seat), {})
    group[facets.key(item.kind, item.seat, subject_of(item))] = item.to_value


class JournalRefused(OSError):
    """The current segment is present but no regular file (a FIFO, a symlink, a directory) or
    cannot be opened: nothing was appended. The message names the path and why."""


class JournalWriter:
    """The supervisor's side: resume, append numbered batches, publish the projection."""

    def __init__(self, directory: Path, publish, segment_bytes: int = SEGMENT_BYTES) -> None:
        self.directory = Path(directory)
        self.publish = publish  # (path, bytes) -> None, atomic (the runtime scope's publication)
        self.segment_bytes = segment_bytes
        self.seq = 0

    def resume(self) -> Resumed:
        """Cut a torn tail off the current segment, then return the sequence number to continue
        from and the projection to diff against (the state's, with every journaled line past
        it applied)."""
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        self._cut_torn_tail()
        journaled = read_all(self.directory)
        last = journaled[-1].seq if journaled else 0
        try:
            state = load_state(self.directory)
        except StateMalformed as error:
            self.seq = last
            return Resumed(last, None, refused_state=str(error))
        if state is None:
            self.seq = last
            return Resumed(last, None)
        seq, groups = state
        replayed = 0
        for item in journaled:
            if item.seq > seq:
                apply(groups, item)
                replayed += 1
        self.seq = max(seq, last)
        return Resumed(self.seq, groups, replayed)

    def _cut_torn_tail(self) -> None:
        path = self.directory / CURRENT
        try:
            descriptor, _ = open_regular(path, follow_symlinks=False, flags=os.O_RDWR)
        except FileNotFoundError:
            return
        except OSError:
            return  # not a regular file: nothing to cut; the next append names it (JournalRefused)
        try:
            size = os.fstat(descriptor).st_size
            if size == 0:
                return
            tail = os.pread(descriptor, min(size, JOURNAL_LIMIT), max(0, size - JOURNAL_LIMIT))
            if tail.endswith(b"\n"):
                return
            end = tail.rfind(b"\n")
            keep = 0 if end < 0 else max(0, size - JOURNAL_LIMIT) + end + 1
            os.ftruncate(descriptor, keep)
        finally:
            os.close(descriptor)

    def append(self, events: list[FleetEvent]) -> list[FleetEvent]:
        """Number ``events`` after the last journaled one and append them in one write; rotate
        first when the current segment would pass its bound. Return the numbered events."""
        if not events:
            return []
        numbered = [item.numbered(self.seq + index + 1) for index, item in enumerate(events)]
        data = "".join(item.line() + "\n" for item in numbered).encode("utf-8")
        path = self.directory / CURRENT
        try:
            descriptor, status = open_regular(path, follow_symlinks=False, flags=os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as error:
            why = error.strerror if isinstance(error, NotRegular) else f"cannot be opened: {error.strerror or error}"
            raise JournalRefused(f"the event journal {path} {why}; nothing is journaled "
                                 "(nor handed to a notify hook) until it is a regular file") from error
        if status.st_size and status.st_size + len(data) > self.segment_bytes:
            os.close(descriptor)
            os.replace(path, self.directory / PREVIOUS)
            descriptor, _ = open_regular(path, follow_symlinks=False, flags=os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            view = memoryview(data)
            while view:
                written = os.write(descriptor, view)
                view = view[written:]
            # Durable before anything covers them: the state published after this append (its
            # directory fsync also makes a new segment's name durable) must never name a seq
            # whose line a power loss could take, or the next start would number past a gap.
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        self.seq = numbered[-1].seq
        return numbered

    def save_state(self, groups: dict[str, dict[str, object]]) -> None:
        body = {"schema": STATE_SCHEMA, "seq": self.seq, "groups": groups}
        self.publish(self.directory / STATE, json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode() + b"\n")


@dataclass
class Follower:
    """A reader following the journal: each :meth:`poll` returns the events appended since the
    last one (past ``after``), following a rotation without losing or repeating a line."""

    directory: Path
    after: int = 0
    inode: int | None = None
    offset: int = 0
    lost: int = 0  # lines rotation dropped before this follower read them (it fell a segment behind)

    def start_at_end(self) -> None:
        """Skip everything already journaled."""
        events = read_all(self.directory)
        self.after = events[-1].seq if events else 0
        try:
            status = os.stat(self.directory / CURRENT)
            self.inode, self.offset = status.st_ino, status.st_size
        except FileNotFoundError:
            self.inode, self.offset = None, 0

    def poll(self) -> list[FleetEvent]:
        found: list[FleetEvent] = []
        current = self.directory / CURRENT
        try:
            status = os.stat(current)
        except FileNotFoundError:
            status = None
        if self.inode is not None and (status is None or status.st_ino != self.inode):
            # Rotated: the segment we were reading is journal.1 now; finish it first.
            try:
                data, previous = read_after(self.directory / PREVIOUS, self.offset, JOURNAL_LIMIT)
                if previous.st_ino == self.inode:
                    found += decode_lines(split_lines(data)[0])
            except OSError:
                pass
            self.inode, self.offset = None, 0
        if status is not None:
            try:
                data, opened = read_after(current, self.offset, JOURNAL_LIMIT)
            except OSError:
                data, opened = b"", None
            if opened is not None and (self.inode is None or opened.st_ino == self.inode):
                self.inode = opened.st_ino
                if opened.st_size < self.offset:  # cut back under us: start the segment over
                    self.offset = 0
                    data, _ = read_after(current, 0, JOURNAL_LIMIT)
                lines, consumed = split_lines(data)
                self.offset += consumed
                found += decode_lines(lines)
        fresh = []
        for item in sorted(found, key=lambda value: value.seq):
            if item.seq > self.after:
                self.lost += item.seq - self.after - 1
                fresh.append(item)
                self.after = item.seq
        return fresh
