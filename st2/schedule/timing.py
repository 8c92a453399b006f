"""The slots of a schedule's cadence, in unix milliseconds. Pure and zone-aware.

``every P`` has the slots ``anchor + k·P`` for k ≥ 1, where the anchor is the instant the
supervisor first observed the schedule (or its changed cadence). ``at HH:MM Zone`` has one slot a
local day: that wall time in the zone (:mod:`zoneinfo`), so it follows the zone's daylight-saving
changes; a wall time a spring-forward skips maps forward by the gap and one a fall-back repeats
is its first occurrence (``fold=0``).
"""

from __future__ import annotations

import datetime

from st2.declarations.model import Schedule

_DAY_MS = 86_400_000


def next_run_ms(schedule: Schedule, anchor_ms: int, after_ms: int) -> int:
    """The earliest slot strictly after ``after_ms``."""
    if schedule.every_seconds is not None:
        period = schedule.every_seconds * 1000
        if after_ms < anchor_ms + period:
            return anchor_ms + period
        return anchor_ms + ((after_ms - anchor_ms) // period + 1) * period
    return min(slot for slot in _daily_slots(schedule, after_ms) if slot > after_ms)


def last_slot_ms(schedule: Schedule, anchor_ms: int, at_or_before_ms: int) -> int | None:
    """The latest slot at or before ``at_or_before_ms`` that is after the anchor, or None."""
    if schedule.every_seconds is not None:
        period = schedule.every_seconds * 1000
        count = (at_or_before_ms - anchor_ms) // period
        return anchor_ms + count * period if count >= 1 else None
    slots = [slot for slot in _daily_slots(schedule, at_or_before_ms) if anchor_ms < slot <= at_or_before_ms]
    return max(slots) if slots else None


def _daily_slots(schedule: Schedule, around_ms: int) -> list[int]:
    """The ``at`` slots of the local days from the day before ``around_ms`` to two days after."""
    import zoneinfo

    zone = zoneinfo.ZoneInfo(schedule.zone)
    day = datetime.datetime.fromtimestamp(around_ms / 1000, zone).date()
    hour, minute = schedule.at
    slots = []
    for offset in (-1, 0, 1, 2):
        date = day + datetime.timedelta(days=offset)
        local = datetime.datetime(date.year, date.month, date.day, hour, minute, tzinfo=zone)
        slots.append(int(local.timestamp()) * 1000)
    return slots


def iso(ms: int) -> str:
    """``2026-12-03T08:00:00Z``: a slot as UTC text."""
    return datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
