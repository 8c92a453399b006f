"""Duration strings as declarations write them: ``500ms``, ``60s``, ``5m``, ``2h``, ``7d``, or a
bare integer meaning seconds. Standard library only."""

from __future__ import annotations

import re

_PATTERN = re.compile(r"(\d+)\s*(ms|s|sec|secs|m|min|mins|h|hr|hrs|d|day|days)?")
_SECONDS = {
    None: 1, "s": 1, "sec": 1, "secs": 1,
    "m": 60, "min": 60, "mins": 60,
    "h": 3600, "hr": 3600, "hrs": 3600,
    "d": 86400, "day": 86400, "days": 86400,
}


def parse_duration_seconds(text: str) -> float | None:
    """Return the duration in seconds, or ``None`` when ``text`` is not a duration."""
    match = _PATTERN.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        return None
    amount = int(match.group(1))
    unit = match.group(2)
    if unit == "ms":
        return amount / 1000
    return float(amount * _SECONDS[unit])
