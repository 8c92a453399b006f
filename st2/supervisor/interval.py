"""``st2 up --interval``: the supervisor's fallback timer between passes, its bound and its reading."""

from __future__ import annotations

MAX_INTERVAL = "1d"  # a fallback timer; the loop's waits (epoll) cannot take much past 24 days
DEFAULT_INTERVAL = "30s"


class IntervalRefused(ValueError):
    """The value is not a positive duration of at most :data:`MAX_INTERVAL`; the message is one
    line that names it."""


def interval_seconds(value: str) -> float:
    """``value`` (``30s``, ``5m``) in seconds. Raise :class:`IntervalRefused`."""
    from st2.declarations.durations import DurationRefused, parse_duration

    try:
        seconds = parse_duration(value, maximum=MAX_INTERVAL)
    except DurationRefused as refusal:
        raise IntervalRefused(f"{refusal} (e.g. 30s, 5m)") from None
    if seconds <= 0:
        raise IntervalRefused(f"{value!r} is not a positive duration (e.g. 30s, 5m)")
    return seconds
