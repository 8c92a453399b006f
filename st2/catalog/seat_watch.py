"""Mutation-only wake-ups for one notifier: the seat's ``resources/inbox`` and ``status`` only.

Watches carry create / modify / close-write / rename / delete masks and never access, open or
close-nowrite, so the notifier's own reads of its inbox and status cannot wake it (seed 003
"Mutation-only filesystem wakeups"). The seat directory is watched for its ``status`` record
(atomic publication renames into it) and for ``resources`` appearing; ``resources`` for
``inbox`` appearing; the inbox for any mail mutation. If inotify is unavailable the watch is
inert and the caller's poll interval alone drives the loop.
"""

from __future__ import annotations

import select
import time
from pathlib import Path

from st2.catalog.layout import INBOX, RESOURCES, STATUS

try:
    from inotify_simple import INotify, flags
except ImportError:  # pragma: no cover - a declared dependency; inert if missing
    INotify = None
    flags = None

if flags is not None:
    MUTATION_MASK = (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
                     | flags.MOVED_TO | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
else:  # pragma: no cover
    MUTATION_MASK = 0


class SeatWatch:
    def __init__(self, seat_directory: Path) -> None:
        self.seat = Path(seat_directory)
        self.roles: dict[int, str] = {}
        self.watched: dict[str, int] = {}
        self.wakeups = 0
        try:
            if INotify is None:
                raise OSError("inotify_simple is not installed")
            self.inotify = INotify(nonblocking=True)
        except OSError:
            self.inotify = None
        self.sync()

    @property
    def active(self) -> bool:
        return self.inotify is not None

    def sync(self) -> None:
        """Watch whichever of seat, resources and inbox exist and are not yet watched."""
        if self.inotify is None:
            return
        for role, path in (("seat", self.seat), ("resources", self.seat / RESOURCES),
                           ("inbox", self.seat / RESOURCES / INBOX)):
            if role in self.watched or not path.is_dir():
                continue
            try:
                descriptor = self.inotify.add_watch(str(path), MUTATION_MASK)
            except OSError:
                continue
            self.watched[role] = descriptor
            self.roles[descriptor] = role

    def _relevant(self, role: str, name: str) -> bool:
        if role == "seat":
            return name in (STATUS, RESOURCES)
        if role == "resources":
            return name == INBOX
        return role == "inbox"

    def drain(self) -> bool:
        """Consume pending events; True when one of them is a relevant mutation."""
        if self.inotify is None:
            return False
        relevant = False
        try:
            events = self.inotify.read(timeout=0)
        except OSError:
            return False
        for event in events:
            role = self.roles.get(event.wd)
            if event.mask & flags.IGNORED:
                self.roles.pop(event.wd, None)
                if role is not None:
                    self.watched.pop(role, None)
                relevant = True
                continue
            if role is not None and self._relevant(role, event.name):
                relevant = True
        if relevant:
            self.sync()
        return relevant

    def wait(self, timeout: float, wake_fd: int | None = None) -> bool:
        """Block up to ``timeout`` seconds for a relevant mutation (True) or a byte on
        ``wake_fd`` (a signal's wake-up; False, left for the caller to drain)."""
        extra = [wake_fd] if wake_fd is not None else []
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            remaining = deadline - time.monotonic()
            watched = ([self.inotify.fileno()] if self.inotify is not None else []) + extra
            readable, _, _ = select.select(watched, [], [], max(0.0, remaining))
            if not readable or (wake_fd is not None and wake_fd in readable):
                return False
            if self.drain():
                self.wakeups += 1
                return True
            # Only irrelevant names changed (another record in the seat): keep waiting.
