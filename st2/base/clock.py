"""The time seam. Wall milliseconds stamp records; monotonic seconds measure durations and
backoff (never wall time for a timeout). Tests inject :class:`FakeClock`."""

from __future__ import annotations

import time


class Clock:
    """The real clock."""

    def wall_ms(self) -> int:
        """Milliseconds since the Unix epoch, for record stamps."""
        return time.time_ns() // 1_000_000

    def monotonic(self) -> float:
        """Seconds on a clock that never goes backwards, for durations."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock(Clock):
    """A clock tests move by hand. ``sleep`` advances both readings instead of waiting."""

    def __init__(self, wall_ms: int = 1_788_000_000_000, monotonic: float = 1000.0) -> None:
        self._wall_ms = wall_ms
        self._monotonic = monotonic

    def wall_ms(self) -> int:
        return self._wall_ms

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, seconds: float) -> None:
        self._wall_ms += int(round(seconds * 1000))
        self._monotonic += seconds

    def set_wall_ms(self, wall_ms: int) -> None:
        """Jump the wall clock (it may go backwards, as a real one can); monotonic is untouched."""
        self._wall_ms = wall_ms

    def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))


SYSTEM_CLOCK = Clock()


class PinnedWallClock(Clock):
    """The real monotonic clock with a wall clock pinned at one instant."""

    def __init__(self, wall_ms: int) -> None:
        self._wall_ms = wall_ms

    def wall_ms(self) -> int:
        return self._wall_ms


PINNED_WALL_ENV = "ST2_CLOCK_WALL_MS"


def command_clock() -> Clock:
    """The clock a read-only CLI verb projects records with. ``$ST2_CLOCK_WALL_MS`` pins its wall
    time so process tests can assert full roster strings, ages included (the same idea as
    ``SOURCE_DATE_EPOCH``); a value that is not an integer is ignored."""
    import os

    value = os.environ.get(PINNED_WALL_ENV)
    if value is not None and value.isascii() and value.isdigit():
        return PinnedWallClock(int(value))
    return SYSTEM_CLOCK
