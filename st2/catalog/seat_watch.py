"""Mutation-only wake-ups on one seat's ``resources/inbox`` and ``status`` only, for the DING
notifier and a native driver's delivery pump.

Watches are :class:`st2.fs.watch.MutationWatch` ones (create / modify / close-write / rename /
delete, never access, open or close-nowrite), so the notifier's own reads of its inbox and status cannot wake it (docs/delivery.md §Scoped wake-ups). The seat directory is watched for its ``status`` record
(atomic publication renames into it) and for ``resources`` appearing; ``resources`` for
``inbox`` appearing; the inbox for any mail mutation. If inotify is unavailable the watch is
inert and the caller's poll interval alone drives the loop.
"""

from __future__ import annotations

import select
import time
from pathlib import Path

from st2.catalog.layout import INBOX, RESOURCES, STATUS
from st2.fs.watch import IGNORED, MutationWatch


def seat_paths(seat_directory: Path) -> tuple[tuple[str, Path], ...]:
    """The directories a seat watch covers, each with its role: the seat, ``resources`` and the
    inbox (a watch is placed on whichever of them exist)."""
    seat = Path(seat_directory)
    return (("seat", seat), ("resources", seat / RESOURCES), ("inbox", seat / RESOURCES / INBOX))


def relevant(role: str, name: str) -> bool:
    """Whether a mutation of ``name`` inside the directory playing ``role`` concerns delivery:
    the seat's ``status`` or ``resources`` appearing, ``inbox`` appearing, any inbox entry."""
    if role == "seat":
        return name in (STATUS, RESOURCES)
    if role == "resources":
        return name == INBOX
    return role == "inbox"


class SeatWatch:
    def __init__(self, seat_directory: Path) -> None:
        self.seat = Path(seat_directory)
        self.watch = MutationWatch()
        self.wakeups = 0
        self.sync()

    @property
    def active(self) -> bool:
        return self.watch.active

    def fileno(self) -> int:
        """The descriptor that becomes readable on a pending event (for a caller's selector)."""
        return self.watch.fileno()

    def sync(self) -> None:
        """Watch whichever of seat, resources and inbox exist and are not yet watched."""
        for role, path in seat_paths(self.seat):
            if path.is_dir():
                self.watch.add(path, role)

    def keepalive(self) -> None:
        """Nothing to keep alive: the instance is this process's own (the shared watch's
        :meth:`st2.seathost.watch_client.SharedSeatWatch.keepalive` re-registers)."""

    def drain(self) -> bool:
        """Consume pending events; True when one of them is a relevant mutation (a dropped
        watch counts: its directory went away or was replaced)."""
        woken = any(mask & IGNORED or relevant(role, name) for role, name, mask in self.watch.events())
        if woken:
            self.sync()
        return woken

    def wait(self, timeout: float, wake_fd: int | None = None) -> bool:
        """Block up to ``timeout`` seconds for a relevant mutation (True) or a byte on
        ``wake_fd`` (a signal's wake-up; False, left for the caller to drain)."""
        extra = [wake_fd] if wake_fd is not None else []
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            remaining = deadline - time.monotonic()
            watched = ([self.fileno()] if self.active else []) + extra
            readable, _, _ = select.select(watched, [], [], max(0.0, remaining))
            if not readable or (wake_fd is not None and wake_fd in readable):
                return False
            if self.drain():
                self.wakeups += 1
                return True
            # Only irrelevant names changed (another record in the seat): keep waiting.
