"""A seat's wake-ups through the seat host's shared inotify instance, for the DING notifier and
the native delivery pumps.

:func:`open_seat_watch` is how a per-seat process gets its watch: registered with the scope's seat
host when one answers (:class:`SharedSeatWatch`, no inotify instance of its own), else a private
:class:`st2.catalog.seat_watch.SeatWatch` (an inotify instance of its own); a private watch that
cannot get an instance (``max_user_instances`` exhausted) is inert, and that is said out loud — the
process then wakes on its timer alone, never silently.

A :class:`SharedSeatWatch` hands the host the write end of a pipe it keeps the read end of
(:meth:`fileno`, stable for the process's life, so a caller's selector stays valid across host
restarts) and holds the registration connection open. When the host dies the connection ends:
the watch says so once, writes itself a catch-up byte (whatever changed meanwhile is read by the
next pass) and re-registers on a later :meth:`wait` / :meth:`keepalive` as soon as a host
answers again, with another catch-up byte; until then the caller's timer drives it. The interface
is :class:`SeatWatch`'s: ``active``, ``fileno``, ``drain``, ``wait``, ``wakeups``.
"""

from __future__ import annotations

import os
import select
import socket
import time
from pathlib import Path
from typing import Callable

from st2.fs.pipe import drain
from st2.seathost import wire

RECONNECT_SECONDS = 1.0


class SharedSeatWatch:
    def __init__(self, seat_directory: Path, socket_path: Path, log: Callable[[str], None]) -> None:
        self.seat = Path(seat_directory)
        self.path = Path(socket_path)
        self.log = log
        self.wakeups = 0
        self.read_end, self.write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.connection: socket.socket | None = None
        self.inotify = False
        self.next_attempt = 0.0
        self.lost = False

    # -- registration --------------------------------------------------------------------
    def register(self) -> bool:
        """Register with the host; True when it serves this seat now."""
        try:
            connection = wire.connect(self.path, timeout=2.0)
        except OSError:
            return False
        try:
            wire.send(connection, {"op": "watch", "seat": str(self.seat)}, (self.write_end,))
            answer, extra = wire.receive(connection)
            for descriptor in extra:
                os.close(descriptor)
        except OSError:
            connection.close()
            return False
        if answer.get("ok") is not True:
            connection.close()
            return False
        connection.setblocking(False)
        self.connection = connection
        self.inotify = bool(answer.get("inotify"))
        if not self.inotify:
            self.log(f"the seat host on {self.path} has no inotify instance; waking on the timer only")
        return True

    @property
    def active(self) -> bool:
        return self.connection is not None and self.inotify

    def fileno(self) -> int:
        return self.read_end

    def _poke(self) -> None:
        try:
            os.write(self.write_end, b"c")
        except BlockingIOError:
            pass

    def keepalive(self) -> None:
        """Notice a host that went away; re-register once one answers again (each change of
        state leaves a catch-up byte, so the caller's next pass reads what it missed)."""
        if self.connection is not None:
            try:
                data = self.connection.recv(64, socket.MSG_PEEK)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if data:
                self.connection.recv(len(data))   # the host never sends; ignore noise
                return
            self.connection.close()
            self.connection = None
            self.log(f"the seat host on {self.path} is gone; waking on the timer until a new one answers")
            self.lost = True
            self._poke()
            return
        now = time.monotonic()
        if now < self.next_attempt:
            return
        self.next_attempt = now + RECONNECT_SECONDS
        if self.register():
            if self.lost:
                self.log(f"registered again with the seat host on {self.path}")
            self.lost = False
            self._poke()

    # -- SeatWatch's interface -------------------------------------------------------------
    def drain(self) -> bool:
        """Consume pending wake-ups; True when there was one."""
        return drain(self.read_end)

    def wait(self, timeout: float, wake_fd: int | None = None) -> bool:
        """Block up to ``timeout`` seconds for a wake-up (True) or a byte on ``wake_fd`` (False,
        left for the caller to drain)."""
        deadline = time.monotonic() + max(0.0, timeout)
        while True:
            self.keepalive()
            watched = [self.read_end] + ([wake_fd] if wake_fd is not None else [])
            if self.connection is not None:
                watched.append(self.connection.fileno())
            remaining = deadline - time.monotonic()
            if self.connection is None:
                remaining = min(remaining, RECONNECT_SECONDS)
            readable = _readable(watched, max(0.0, remaining))
            if wake_fd is not None and wake_fd in readable:
                return False
            if self.read_end in readable and self.drain():
                self.wakeups += 1
                return True
            if time.monotonic() >= deadline:
                return False

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        for descriptor in (self.read_end, self.write_end):
            os.close(descriptor)


def _readable(descriptors: list[int], timeout: float) -> list[int]:
    """Which of ``descriptors`` are readable (or hung up) within ``timeout`` seconds. ``poll``,
    not ``select``: the DING service (:mod:`st2.ding.service`) holds one watch per seat in one
    process, so its descriptors run past ``select``'s 1024 bound at fleet scale."""
    poller = select.poll()
    for descriptor in descriptors:
        poller.register(descriptor, select.POLLIN)
    try:
        events = poller.poll(timeout * 1000.0)
    except InterruptedError:
        return []
    return [descriptor for descriptor, _ in events]


def open_seat_watch(seat_directory: Path, scope_directory: Path | None, log: Callable[[str], None]):
    """The seat's watch: shared through the scope's seat host when one answers, else a private
    one; an inert private watch is reported through ``log``."""
    if scope_directory is not None:
        shared = SharedSeatWatch(seat_directory, wire.socket_path(scope_directory), log)
        if shared.register():
            return shared
        shared.close()
    from st2.catalog.seat_watch import SeatWatch

    private = SeatWatch(seat_directory)
    if not private.active:
        log(f"inotify is unavailable ({private.watch.error}); waking on the timer only "
            "(fs.inotify.max_user_instances exhausted? `st2 doctor` counts them)")
    return private
