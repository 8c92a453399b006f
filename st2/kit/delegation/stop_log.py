"""The turn-end hook's log: one appended line per firing (docs/kit.md §Turn-end liveness hook).

    <UTC ISO-8601>  event=…  session=…  live=…  verdict=…  spawn=…  records=…  runs=…  decision=…  keys=…

Two spaces separate the stamp and each ``key=value``. The line is composed from :data:`FIELDS`
zipped against the values, so a field added to the table appears without any reader changing;
readers parse by key (:func:`parse_line`), never by position or arity. Every value is one token
(whitespace and control characters become ``_``; an empty value is ``-``), so a payload string
can never split the line. Nothing beyond these fields is logged: no payload value other than
the event name and session id, nothing of the task view or the transcript.
"""

from __future__ import annotations

import time

from st2.fs.log import append_line

FIELDS: tuple[str, ...] = (
    "event",
    "session",
    "live",
    "verdict",
    "spawn",
    "records",
    "runs",
    "decision",
    "keys",
)
"""The log's field table, in line order. ``spawn`` sits right after the ``verdict`` it
qualifies; ``runs`` beside the ``records`` count of the same set; ``keys`` stays last."""

SEPARATOR = "  "


def sanitize(value: str) -> str:
    """One whitespace-free token: whitespace and unprintable characters become ``_``; empty is ``-``."""
    token = "".join(c if c.isprintable() and not c.isspace() else "_" for c in value)
    return token or "-"


def utc_stamp(wall_ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` for a wall-clock reading in milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(wall_ms // 1000))


def render_line(stamp: str, values: list[str]) -> str:
    """The log line for one firing (newline-terminated). ``values`` pairs with :data:`FIELDS`
    one to one; a length mismatch raises rather than truncating silently."""
    if len(values) != len(FIELDS):
        raise ValueError(f"the log line zips {len(FIELDS)} fields against {len(values)} values")
    return stamp + "".join(f"{SEPARATOR}{name}={value}" for name, value in zip(FIELDS, values)) + "\n"


def parse_line(line: str) -> tuple[str, dict[str, str]]:
    """A reader's view of one line: the stamp and every ``key=value`` it carries, by key."""
    parts = line.rstrip("\n").split(SEPARATOR)
    fields: dict[str, str] = {}
    for part in parts[1:]:
        name, _, value = part.partition("=")
        fields[name] = value
    return parts[0], fields


def append(path: str, line: str) -> None:
    """Append ``line`` to the log (:func:`st2.fs.log.append_line`). Best-effort: an unwritable
    log is no reason to refuse or allow a turn end differently."""
    append_line(path, line)
