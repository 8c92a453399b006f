"""Duration strings as declarations and flags write them: ``500ms``, ``60s``, ``5m``, ``2h``,
``7d``, or a bare integer meaning seconds. The one parser of durations in st2.

Every duration is bounded: at most :data:`MAX_DURATION` (365 days) unless a knob names a smaller
maximum, so no declared value reaches a timer, a ``select`` timeout or a float conversion that it
would overflow. A longer value is refused where it is read, like any other malformed value, and
its digits are never converted (a 5,000-digit amount costs a length check, not a conversion).
Standard library only.
"""

from __future__ import annotations

import re

_PATTERN = re.compile(r"([0-9]+)\s*(ms|s|sec|secs|m|min|mins|h|hr|hrs|d|day|days)?")
_SECONDS = {
    None: 1, "s": 1, "sec": 1, "secs": 1,
    "m": 60, "min": 60, "mins": 60,
    "h": 3600, "hr": 3600, "hrs": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}
MAX_DURATION = "365d"
MAX_DURATION_SECONDS = 365 * 86400.0
# More significant digits than any amount within the bound has (365 d is 31,536,000,000 ms).
_MAX_DIGITS = 12
SHOWN_CHARACTERS = 24  # of a refused value quoted in a message; the rest is counted


class DurationRefused(ValueError):
    """``str()`` is the reason, quoting the value: ``"5x" is not a duration``."""


def shown_value(text: str) -> str:
    """``text`` quoted for a message, cut to :data:`SHOWN_CHARACTERS` with the length named."""
    if len(text) <= SHOWN_CHARACTERS:
        return f'"{text}"'
    return f'"{text[:SHOWN_CHARACTERS]}…" ({len(text)} characters)'


def parse_duration(text: str, maximum: str = MAX_DURATION) -> float:
    """Return the seconds ``text`` declares. Raise :class:`DurationRefused` when it is not a
    duration or is longer than ``maximum`` (itself a duration, at most :data:`MAX_DURATION`)."""
    seconds = _seconds(text)
    if seconds is None:
        raise DurationRefused(f"{shown_value(str(text))} is not a duration")
    if seconds > min(_seconds(maximum) or 0.0, MAX_DURATION_SECONDS):
        raise DurationRefused(f"{shown_value(text)} is longer than the maximum, {maximum}")
    return seconds


def _seconds(text: str) -> float | None:
    """The seconds of ``text``; ``inf`` past any bound (its digits are never converted); None
    when it is not a duration."""
    match = _PATTERN.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    digits = match.group(1).lstrip("0")
    if len(digits) > _MAX_DIGITS:
        return float("inf")
    amount = int(digits or "0")
    unit = match.group(2)
    return amount / 1000 if unit == "ms" else float(amount * _SECONDS[unit])


def parse_duration_seconds(text: str) -> float | None:
    """Return the duration in seconds, or ``None`` when ``text`` is not a duration within
    :data:`MAX_DURATION` (:func:`parse_duration` says which)."""
    try:
        return parse_duration(text)
    except DurationRefused:
        return None
