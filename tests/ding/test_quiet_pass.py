"""The notifier loop passes a quiet seat (no unread mail, nothing owned) only on a wake or once
``quiet_pass_interval`` has gone by, while it checks the session on every tick; a seat with unread
mail is passed on every tick (st2.ding.notifier.run)."""

from __future__ import annotations

import socket

from st2.base.clock import FakeClock
from st2.ding.notifier import Settings, run


class Watch:
    """Waits by advancing the clock; wakes on the ticks listed in ``wakes``."""

    def __init__(self, clock: FakeClock, wakes=()) -> None:
        self.clock, self.wakes, self.ticks, self.wakeups = clock, set(wakes), 0, 0

    def wait(self, timeout: float, wake_fd=None) -> bool:
        self.ticks += 1
        self.clock.advance(timeout)
        return self.ticks in self.wakes

    def drain(self) -> None:
        pass


class Seat:
    """The loop's view of a notifier: its passes counted, its quietness as a pass leaves it."""

    def __init__(self, clock: FakeClock, quiet: bool) -> None:
        self.clock, self.settings, self.next_attempt = clock, Settings(), None
        self.quiet_after_a_pass, self.quiet = quiet, False
        self.passes, self.attempts, self.inbox_passes = 0, 0, []

    def pass_once(self) -> None:
        self.inbox_passes.append(self.clock.monotonic())
        self.quiet = self.quiet_after_a_pass

    def log(self, line: str) -> None:
        pass


def loop(tmp_path, quiet: bool, ticks: int, wakes=()) -> Seat:
    clock = FakeClock(monotonic=0.0)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / "tmux"))
    server.listen(64)
    try:
        seat, watch = Seat(clock, quiet), Watch(clock, wakes)
        run(seat, watch, str(tmp_path / "tmux"), lambda: watch.ticks >= ticks)
    finally:
        server.close()
    return seat


def test_a_quiet_seat_is_passed_at_start_on_a_wake_and_every_quiet_interval(tmp_path) -> None:
    seat = loop(tmp_path, quiet=True, ticks=13, wakes={7})
    # Ticks fall at 0.25 s (the start-up grace) and then every second, the session checked on each.
    # The first pass runs once the grace is over; the next 5 s later (the fallback); one on the wake
    # that ends tick 7; then 5 s after that one.
    assert seat.inbox_passes == [0.25, 5.25, 6.25, 11.25]


def test_a_seat_with_unread_mail_is_passed_on_every_tick(tmp_path) -> None:
    seat = loop(tmp_path, quiet=False, ticks=6)
    assert seat.inbox_passes == [0.25, 1.25, 2.25, 3.25, 4.25]
