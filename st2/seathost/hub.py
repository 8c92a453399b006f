"""The shared watch: ONE inotify instance serving every registered seat.

``fs.inotify.max_user_instances`` defaults to 128 per user, so one instance per notifier and
per native pump stops at ~128 seats; watches are plentiful (three per seat). The hub holds one
:class:`st2.fs.watch.MutationWatch` (mutation-only, so nobody's reads wake anybody) and, per
registration, the seat's directories by role (:func:`st2.catalog.seat_watch.seat_paths`). A
directory two registrations share is watched once. A relevant mutation
(:func:`st2.catalog.seat_watch.relevant`, the same rule a private :class:`SeatWatch` applies) or
a dropped watch re-syncs that registration's watches (an inbox that appeared is watched from
now on) and writes one byte into its wake pipe; a full pipe already holds a pending wake-up, so
the byte is dropped, never blocked on.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from st2.catalog.seat_watch import relevant, seat_paths
from st2.fs.watch import IGNORED, MutationWatch


@dataclass
class Registration:
    seat: Path
    wake: int                                   # write end of the registrant's wake pipe
    roles: dict = field(default_factory=dict)   # watched path -> role


class WatchHub:
    def __init__(self) -> None:
        self.watch = MutationWatch()
        self.registrations: dict[int, Registration] = {}
        self.watchers: dict[Path, set[int]] = {}
        self.wakes = 0

    @property
    def error(self) -> str | None:
        return self.watch.error

    def fileno(self) -> int:
        return self.watch.fileno()

    def register(self, key: int, seat: Path, wake: int) -> None:
        """Serve ``seat`` for registration ``key`` (the host's connection descriptor), waking it
        through ``wake`` (the hub owns that descriptor from now on)."""
        os.set_blocking(wake, False)
        self.registrations[key] = Registration(Path(seat), wake)
        self._sync(key)

    def unregister(self, key: int) -> None:
        registration = self.registrations.pop(key, None)
        if registration is None:
            return
        for path in registration.roles:
            users = self.watchers.get(path, set())
            users.discard(key)
            if not users:
                self.watchers.pop(path, None)
                self.watch.remove(path)
        os.close(registration.wake)

    def _sync(self, key: int) -> None:
        registration = self.registrations[key]
        for role, path in seat_paths(registration.seat):
            if path in registration.roles or not path.is_dir():
                continue
            if self.watch.add(path, str(path)) is None and self.watch.watching(path):
                registration.roles[path] = role
                self.watchers.setdefault(path, set()).add(key)

    def drain(self) -> None:
        """Take every pending event and wake each registration it concerns, once."""
        woken: set[int] = set()
        for role, name, mask in self.watch.events():
            path = Path(role) if role else None
            users = self.watchers.get(path, set()) if path is not None else set()
            if mask & IGNORED:
                # The directory went away or was replaced: forget it for everyone on it.
                self.watchers.pop(path, None)
                for key in users:
                    self.registrations[key].roles.pop(path, None)
                woken |= users
                continue
            for key in users:
                if relevant(self.registrations[key].roles.get(path, ""), name):
                    woken.add(key)
        for key in woken:
            if key in self.registrations:
                self._sync(key)
                self.wake(key)

    def wake(self, key: int) -> None:
        try:
            os.write(self.registrations[key].wake, b"w")
            self.wakes += 1
        except BlockingIOError:
            pass          # a wake-up is already pending in the pipe
        except OSError:
            pass          # the registrant is gone; its connection's end unregisters it
