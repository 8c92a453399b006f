"""One fleet event: the ``st2.fleet-event.v1`` wire line.

Field order is the contract: ``schema, seq, kind, seat, from, to, observedAtMs, evidence``.
``seq`` is the journal's sequence number (``null`` for a transition proved from the current
records alone, outside any journal); ``seat`` is ``<host>.<identity>`` (``null`` for the
fleet-wide usage verdict); ``from`` and ``to`` are the projected values the transition is
between (``null`` where there was no observation); ``observedAtMs`` is when st2 observed the
transition (the record's own stamp for a proved one); ``evidence`` is a small object per kind
naming what the projection read. Standard library only.

Reading (:func:`parse_line`) never raises past :class:`NotAnEvent`: a line whose ``seq`` is past
:data:`MAX_SEQ` or whose ``observedAtMs`` is no renderable millisecond stamp
(:func:`st2.records.decoding.is_stamp`) is malformed, as a mistyped one is. Rendering
(:meth:`FleetEvent.human`, :meth:`FleetEvent.line`) never prints a control character: the human
form escapes every non-printable character of every field (:func:`st2.catalog.names.shown`), and
the JSON line carries each as a ``\\uXXXX`` escape (the same JSON value).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from st2.catalog.names import shown
from st2.records.decoding import is_stamp

SCHEMA = "st2.fleet-event.v1"
# The largest sequence number read: the largest integer every JSON reader holds exactly. A
# journal line or saved state past it is not one st2 wrote (it would take 2**53 appends).
MAX_SEQ = 2**53 - 1

from st2.declarations.event_kinds import (BLOCKED, COMPACTION, CONTEXT, DIAGNOSTIC, HOLD, KINDS, PARKED, PAUSE, RESOURCE,  # noqa: F401
                             STALE, USAGE_STALE)


@dataclass(frozen=True)
class FleetEvent:
    kind: str
    seat: str | None
    from_value: Any
    to_value: Any
    observed_at_ms: int
    evidence: dict[str, Any]
    seq: int | None = None

    def numbered(self, seq: int) -> "FleetEvent":
        return replace(self, seq=seq)

    def wire(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "seq": self.seq, "kind": self.kind, "seat": self.seat,
                "from": self.from_value, "to": self.to_value, "observedAtMs": self.observed_at_ms,
                "evidence": self.evidence}

    def line(self) -> str:
        """The JSON line (no newline): compact, field order fixed, printable non-ASCII kept, every
        other character (C1 controls, bidi overrides, separators) as its ``\\u`` escape."""
        text = json.dumps(self.wire(), separators=(",", ":"), ensure_ascii=False)
        return text if text.isprintable() else "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in text)

    def human(self) -> str:
        """``2026-12-01T11:47:34.123Z #12 blocked alpha.a none -> human (ask=permission)``; every
        field escaped (:func:`st2.catalog.names.shown`)."""
        number = f"#{self.seq}" if self.seq is not None else "#-"
        details = " ".join(f"{shown(str(key))}={_word(value)}" for key, value in self.evidence.items() if value is not None)
        text = (f"{when(self.observed_at_ms)} {number} {shown(self.kind)} {_word(self.seat or 'fleet')} "
                f"{_word(self.from_value)} -> {_word(self.to_value)}")
        return f"{text} ({details})" if details else text


def when(stamp_ms: int) -> str:
    """A millisecond stamp as RFC 3339 UTC (``2026-12-01T11:47:34.123Z``); one no datetime can
    render (not :func:`st2.records.decoding.is_stamp`, which every reader refuses) as its digits
    and ``ms``, so rendering never raises."""
    if not is_stamp(stamp_ms):
        return f"{stamp_ms}ms"
    moment = datetime.fromtimestamp(stamp_ms // 1000, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp_ms % 1000:03d}Z"


def _word(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}"
    return shown(str(value))


class NotAnEvent(ValueError):
    """A journal line that is not a ``st2.fleet-event.v1`` object."""


def parse_line(line: bytes | str) -> FleetEvent:
    """Decode one journal line; raise :class:`NotAnEvent` for anything but a well-formed one."""
    from st2.records.decoding import Malformed, load_object

    try:
        body = load_object(line.encode() if isinstance(line, str) else line)
    except (Malformed, ValueError, UnicodeDecodeError) as error:
        raise NotAnEvent(str(error)) from error
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise NotAnEvent("not a st2.fleet-event.v1 object")
    seq, kind, seat, observed, evidence = (body.get(name) for name in ("seq", "kind", "seat", "observedAtMs", "evidence"))
    if (not isinstance(seq, int) or isinstance(seq, bool) or not 1 <= seq <= MAX_SEQ or kind not in KINDS
            or not (seat is None or isinstance(seat, str)) or not is_stamp(observed)
            or not isinstance(evidence, dict) or "from" not in body or "to" not in body):
        raise NotAnEvent("a st2.fleet-event.v1 line with a missing or mistyped field")
    return FleetEvent(kind, seat, body["from"], body["to"], observed, evidence, seq)
