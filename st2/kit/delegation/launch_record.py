"""The launch record: one line, ``pid=<n> run=<key>``, at ``<scratch>/<key>.run``.

The launcher that backgrounds a producer writes it (a shell builtin is enough:
``echo "pid=$! run=KEY" > .tmp/KEY.run``); whoever arrives next reads it. st2 extends the
grammar by one optional field, ``start=<ticks>``, the producer's start time in clock ticks
since boot (``/proc/<pid>/stat`` field 22), so a PID the kernel has since reused is never read
as the producer. A record without ``start=`` is read as the template writes it.

Only a producer owes a record: a child writing anything a later reader must not race. A wait
loop and a read-only pipeline are observers and write none.

Standard library only: the liveness reader that the turn-end hook spawns imports this.
"""

from __future__ import annotations

from collections import namedtuple

SUFFIX = ".run"
"""A record's file name is ``<key>.run``; the suffix makes the record set a glob."""

_KEY_FIRST = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_KEY_REST = _KEY_FIRST | frozenset("._-")


def valid_key(key: str) -> bool:
    """The run keys st2 writes: ``[A-Za-z0-9][A-Za-z0-9._-]*``. A hand-written record's key is
    read as any one token."""
    return bool(key) and key[0] in _KEY_FIRST and all(character in _KEY_REST for character in key)


PID_MAX = 4_194_304
"""The kernel's ``PID_MAX_LIMIT`` on 64-bit Linux: no process id is larger."""
TICKS_MAX = 2**64 - 1
"""``/proc/<pid>/stat`` field 22 is an unsigned 64-bit count."""


def _is_decimal(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _decimal_at_most(text: str, bound: int) -> int | None:
    """``text`` as a decimal from 0 to ``bound``, or None. The length is checked before any
    conversion: a 5,000-digit field is refused as malformed, never converted."""
    if not _is_decimal(text) or len(text.lstrip("0")) > len(str(bound)):
        return None
    value = int(text)
    return value if value <= bound else None


def process_id(text: str) -> int | None:
    """``text`` as a process id (a decimal from 1 to :data:`PID_MAX`), or None."""
    return _decimal_at_most(text, PID_MAX) or None


def _shown(value: str) -> str:
    """A field's value as a diagnostic quotes it: at most 24 characters."""
    return value if len(value) <= 24 else value[:21] + "..."


class MalformedRecord(ValueError):
    """A record that does not parse: it reads as "could not be established", never as
    "nothing running"."""


# A namedtuple, not a dataclass: importing dataclasses pulls in inspect, a quarter of a bare
# interpreter start on this per-firing path (benchmarks/hot_paths.py).
class LaunchRecord(namedtuple("LaunchRecord", ("pid", "run", "start"), defaults=(None,))):
    """One parsed record: ``pid`` (int), ``run`` key (str), and ``start`` ticks (int) or None."""

    __slots__ = ()

    def render(self) -> str:
        """The record's one line, newline-terminated."""
        line = f"pid={self.pid} run={self.run}"
        if self.start is not None:
            line += f" start={self.start}"
        return line + "\n"


def parse(text: str) -> LaunchRecord:
    """Given a record's text, return the :class:`LaunchRecord`.

    Exactly one non-blank line of whitespace-separated ``name=value`` fields: ``pid`` (a
    decimal from 1 to :data:`PID_MAX`) and ``run`` (one token) are required, ``start`` (decimal
    ticks up to :data:`TICKS_MAX`) is optional, nothing else is allowed and no field repeats. Raise :class:`MalformedRecord`
    naming what is wrong otherwise.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise MalformedRecord("the record is empty; a launch record is one line, pid=<n> run=<key>")
    if len(lines) > 1:
        raise MalformedRecord(f"the record holds {len(lines)} lines; a launch record is one line")
    fields: dict[str, str] = {}
    for token in lines[0].split():
        name, separator, value = token.partition("=")
        if not separator or not value:
            raise MalformedRecord(f"{token!r} is not a name=value field")
        if name not in ("pid", "run", "start"):
            raise MalformedRecord(f"unknown field {name!r}; a launch record carries pid=, run= and optionally start=")
        if name in fields:
            raise MalformedRecord(f"field {name!r} is given twice")
        fields[name] = value
    for required in ("pid", "run"):
        if required not in fields:
            raise MalformedRecord(f"the record carries no {required}=")
    pid = process_id(fields["pid"])
    if pid is None:
        raise MalformedRecord(f"pid={_shown(fields['pid'])} is not a positive process id")
    start = fields.get("start")
    ticks = None if start is None else _decimal_at_most(start, TICKS_MAX)
    if start is not None and ticks is None:
        raise MalformedRecord(f"start={_shown(start)} is not a count of clock ticks")
    return LaunchRecord(pid=pid, run=fields["run"], start=ticks)


def key_of(file_name: str) -> str | None:
    """The run key a file name ``<key>.run`` names, or None when the name is not a record's."""
    if not file_name.endswith(SUFFIX):
        return None
    key = file_name[: -len(SUFFIX)]
    return key or None
