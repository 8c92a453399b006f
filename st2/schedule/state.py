"""The schedule state record: when each of a seat's schedules was armed, last fired and runs next.

Where: ``<session store>/schedules/<runtime-id>.json`` (:func:`st2.runtime.layout.schedule_state`),
host-local and kept across a reboot, so downtime of any length ends in at most one catch-up and a
restarted supervisor never posts a slot twice. Owner-only, published atomically and durably by
the session store's writer. Wire shape, field order fixed::

    {"schema":"st2.schedule-state.v1","agent":"<host>.<identity>","schedules":[
      {"name":N,"cadence":"every 86400s"|"at 09:00 Europe/Berlin","anchorMs":ms,
       "lastSlotMs":ms|null,"lastFiredMs":ms|null,"nextRunMs":ms}]}

``anchorMs`` is when the supervisor first observed the schedule with this cadence (a changed
cadence re-arms it from the change); ``lastSlotMs`` the slot last posted and ``lastFiredMs`` when.
:func:`read` never raises: a missing, foreign or malformed record reads as None (the runner then
re-arms every schedule from now, which posts nothing early; a slot it already posted is known to
the stream's receipt ring).
"""

from __future__ import annotations

import json
from collections import namedtuple
from pathlib import Path

from st2.fs.atomic import ensure_real_directory
from st2.fs.read import RUNTIME_LIMIT, read_optional
from st2.records.decoding import Malformed, load_object
from st2.runtime import layout
from st2.runtime.resumable_session import SessionStore

SCHEMA = "st2.schedule-state.v1"


class Entry(namedtuple("Entry", ("name", "cadence", "anchor_ms", "last_slot_ms", "last_fired_ms", "next_run_ms"))):
    """One schedule's state."""

    __slots__ = ()

    def wire(self) -> dict:
        return {"name": self.name, "cadence": self.cadence, "anchorMs": self.anchor_ms,
                "lastSlotMs": self.last_slot_ms, "lastFiredMs": self.last_fired_ms, "nextRunMs": self.next_run_ms}


def path(store: SessionStore, runtime_id: str) -> Path:
    return layout.schedule_state(store.directory, runtime_id)


def render(agent: str, entries: list[Entry]) -> bytes:
    record = {"schema": SCHEMA, "agent": agent, "schedules": [entry.wire() for entry in entries]}
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def parse(data: bytes | None, agent: str) -> dict[str, Entry] | None:
    """The entries by name, or None for a missing, foreign or malformed record."""
    if data is None:
        return None
    try:
        record = load_object(data)
        if record.get("schema") != SCHEMA or record.get("agent") != agent or not isinstance(record.get("schedules"), list):
            return None
        entries = {}
        for item in record["schedules"]:
            entry = Entry(item["name"], item["cadence"], item["anchorMs"], item["lastSlotMs"], item["lastFiredMs"],
                          item["nextRunMs"])
            if not (isinstance(entry.name, str) and isinstance(entry.cadence, str)
                    and all(_stamp(value) for value in (entry.anchor_ms, entry.next_run_ms))
                    and all(value is None or _stamp(value) for value in (entry.last_slot_ms, entry.last_fired_ms))):
                return None
            entries[entry.name] = entry
        return entries
    except (Malformed, ValueError, KeyError, TypeError, AttributeError):
        return None


def _stamp(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 253_402_300_799_999


def read(store: SessionStore, runtime_id: str) -> dict[str, Entry] | None:
    """The seat's record (:func:`parse`); None when it cannot be read."""
    try:
        data = read_optional(path(store, runtime_id), RUNTIME_LIMIT, follow_symlinks=False)
    except OSError:
        return None
    return parse(data, runtime_id)


def write(store: SessionStore, runtime_id: str, entries: list[Entry]) -> None:
    """Publish the seat's record atomically and durably (owner-only)."""
    target = path(store, runtime_id)
    store.ensure()
    ensure_real_directory(target.parent, mode=0o700)
    store.publish(target, render(runtime_id, entries))


def next_run_text(schedule, entry: Entry | None) -> str:
    """What Doctor and ``st2 top`` say of one declared schedule given its recorded entry:
    ``daily (every 86400s): next run 2026-12-03T06:00:00Z, last posted 2026-12-02T06:00:00Z``."""
    from st2.schedule.timing import iso

    head = f"{schedule.name} ({schedule.cadence})"
    if entry is None or entry.cadence != schedule.cadence:
        return f"{head}: not armed yet; st2 up arms it on its next pass"
    last = "never posted" if entry.last_slot_ms is None else f"last posted {iso(entry.last_slot_ms)}"
    return f"{head}: next run {iso(entry.next_run_ms)}, {last}"
