"""The seat host's loop: ``st2 seat-host``, one per runtime scope (catalog + host).

Started by the supervisor (:mod:`st2.seathost.client`) in its own session, never in the
supervisor's group, so stopping or SIGKILLing ``st2 up`` leaves it running. One at a time: it
holds ``seat-host.lock`` (``flock``, released by the kernel on any death) before it binds
``seat-host.sock``; a second start finds the lock taken and exits 0. It imports the per-seat
processes' modules once (the caller's ``preload``), runs ``gc.freeze()``, and then serves
requests (:mod:`st2.seathost.wire`) one at a time on a single thread (a fork is only safe from
a single-threaded process): has its zygote (:mod:`st2.seathost.zygote`, forked right after the
freeze) fork per-seat processes (:mod:`st2.seathost.fork`; a native seat's session wrapper,
:mod:`st2.seathost.session_fork`) and tracks them by PID and start ticks (forking them itself,
and reaping them, only when no zygote can be had: one cannot be forked, said in its log at
each such fork, or ``ST2_SEAT_HOST_ZYGOTE=off``, said once at its start),
and serves every registered seat watch from one inotify instance (:mod:`st2.seathost.hub`).

Nothing a forked process needs lives here: if the host is SIGKILLed its children keep running
(re-parented, with the PID, start time and group their launch records name), the watch
registrations see the end of their connection and each wakes on its own timer until the next
``st2 up`` pass starts a new host and they register again. SIGTERM (handlers only record; the
loop acts) and a ``retire`` request end the loop the same way.
"""

from __future__ import annotations

import gc
import os
import selectors
import signal
import socket
import sys
from pathlib import Path
from typing import Callable

from st2.fs.lock import LockTimeout, RecordLock
from st2.fs.pipe import drain
from st2.process import proc_stat
from st2.seathost import fork as fork_module
from st2.seathost import session_fork
from st2.seathost import wire
from st2.seathost import zygote as zygote_module
from st2.seathost.hub import WatchHub
from st2.seathost.keeper import OPERATION as KEEP, Keeper

LOCK_WAIT_SECONDS = 10.0
ZYGOTE_KNOB = "ST2_SEAT_HOST_ZYGOTE"   # "off": no zygote; the host forks every per-seat process itself
IDLE_EXIT_SECONDS = 60.0   # no child of ours alive and no registration: nothing to serve


def say(line: str) -> None:
    print(f"st2 seat-host: {line}", file=sys.stderr, flush=True)


class SeatHost:
    def __init__(self, scope_directory: Path, entry: Callable[[list[str]], int],
                 session_entry: Callable[[list[str]], int] | None = None,
                 session_preload: Callable[[], None] | None = None) -> None:
        """``entry`` runs a forked per-seat process's CLI words; ``session_entry`` a forked
        session wrapper's (:mod:`st2.seathost.session_fork`; None: such requests are refused),
        after ``session_preload`` ran once, at the first such request (then frozen too)."""
        self.directory = Path(scope_directory)
        self.entry = entry
        self.session_entry = session_entry
        self.session_preload = session_preload
        self.build = wire.build_id()
        self.hub = WatchHub()
        self.children: set[int] = set()              # forked here directly (no zygote): waited for
        self.remote: dict[int, int] = {}             # the zygote's children: pid -> start ticks
        self.zygote = zygote_module.Link(entry, session_entry)
        self.use_zygote = os.environ.get(ZYGOTE_KNOB, "on") != "off"
        self.stopping = False
        self.listener: socket.socket | None = None
        self.connections: dict[int, socket.socket] = {}
        self.bound_inode: int | None = None
        self.peers: dict[int, int | None] = {}     # registration -> the registrant's pid
        self.drops = wire.DropLog(say)
        from st2.base.clock import Clock

        self.keeper = Keeper(Clock(), say)           # anchored session wrappers' periodic duties

    # -- start ---------------------------------------------------------------------------
    def _take_lock(self) -> RecordLock | None:
        """The host lock, waiting up to :data:`LOCK_WAIT_SECONDS` for a retiring predecessor to
        let go; None when another host keeps it."""
        lock = RecordLock(wire.lock_path(self.directory), timeout=LOCK_WAIT_SECONDS)
        try:
            lock.acquire()
        except LockTimeout:
            return None
        return lock

    def _bind(self) -> socket.socket:
        # We hold the lock: whatever answers there is a dead host's socket.
        listener, self.bound_inode = wire.listen(wire.socket_path(self.directory), 256)
        return listener

    def serve(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = self._take_lock()
        if lock is None:
            say(f"another seat host holds {wire.lock_path(self.directory)}; exiting")
            return 0
        self.listener = self._bind()
        if self.hub.error:
            say(f"inotify is unavailable ({self.hub.error}): registered seats wake on their timers only")
        read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGCHLD, lambda number, frame: None)
        # Everything imported so far is shared copy-on-write with every child: keep the collector
        # from touching (and so copying) those pages in the children.
        gc.collect()
        gc.freeze()
        if self.use_zygote:
            self._start_zygote()
        else:
            say(f"no zygote ({ZYGOTE_KNOB}=off): forking every per-seat process here, from the host itself")
        say(f"serving {self.directory} as pid {os.getpid()} (build {self.build})")
        try:
            self._loop(read_end)
        finally:
            self._close(lock)
        say("stopped; every forked process keeps running")
        return 0

    def _stop(self, number, frame) -> None:  # only records; the loop acts
        self.stopping = True

    # -- the loop ------------------------------------------------------------------------
    def _loop(self, wake: int) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, "accept")
        selector.register(wake, selectors.EVENT_READ, "signal")
        if not self.hub.error:
            selector.register(self.hub.fileno(), selectors.EVENT_READ, "inotify")
        import time

        idle_since = time.monotonic()
        while not self.stopping:
            if self.children or self.hub.registrations or self.keeper.kept or self._remote_alive():
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= IDLE_EXIT_SECONDS:
                say(f"nothing to serve for {IDLE_EXIT_SECONDS:g}s; exiting (the next st2 up starts another)")
                break
            if not self._still_bound():
                say("my socket was removed or replaced; exiting")
                break
            due = self.keeper.seconds_until_due()
            for key, _ in selector.select(5.0 if due is None else min(5.0, due)):
                if key.data == "accept":
                    self._accept(selector)
                elif key.data == "signal":
                    drain(wake)
                elif key.data == "inotify":
                    self.hub.drain()
                else:
                    self._registration_ended(selector, key.fd)
            self.keeper.run_due()
            self._reap()
        selector.close()

    def _still_bound(self) -> bool:
        try:
            return os.stat(wire.socket_path(self.directory)).st_ino == self.bound_inode
        except OSError:
            return False

    def _accept(self, selector) -> None:
        """One pending request (:func:`wire.answer_one`: a malformed one is dropped and said)."""
        if not self.stopping:
            wire.answer_one(self.listener, lambda connection, body, descriptors:
                            self._handle(connection, body, descriptors, selector), self.drops)

    def _handle(self, connection, body: dict, descriptors: list[int], selector) -> bool:
        """Answer one request; True when the connection stays open (a watch registration)."""
        operation = body.get("op")
        if operation == "watch" and isinstance(body.get("seat"), str) and len(descriptors) == 1:
            key = connection.fileno()
            try:
                self.hub.register(key, Path(body["seat"]), descriptors[0])
                wire.send(connection, {"ok": True, "pid": os.getpid(), "inotify": self.hub.error is None})
            except BaseException:   # no half registration: the hub owns the wake end once registered
                if key in self.hub.registrations:
                    self.hub.unregister(key)
                else:
                    os.close(descriptors[0])
                raise
            self.peers[key] = _peer_pid(connection)
            connection.setblocking(False)
            self.connections[key] = connection
            selector.register(connection, selectors.EVENT_READ, "registration")
            return True
        if operation == KEEP and not descriptors:
            return self._keep(connection, body, selector)
        try:
            if operation == "hello":
                wire.send(connection, {"protocol": wire.PROTOCOL, "build": self.build, "pid": os.getpid(),
                                       "watching": len(self.hub.registrations),
                                       "registrants": sorted(pid for pid in self.peers.values() if pid),
                                       "kept": self.keeper.summary(),
                                       "inotify": self.hub.error is None, "zygote": self.zygote.pid})
            elif operation == "fork" and len(descriptors) == 1:
                wire.send(connection, self._fork(body, descriptors))
            elif operation == session_fork.OP:
                wire.send(connection, self._fork(body, descriptors))
            elif operation == "retire":
                wire.send(connection, {"ok": True})
                self.stopping = True
            else:
                wire.send(connection, {"error": wire.printable(f"unknown request {operation!r}")})
        finally:
            for descriptor in descriptors:
                os.close(descriptor)
        return False

    def _keep(self, connection, body: dict, selector) -> bool:
        """A ``keep`` registration (:mod:`st2.seathost.keeper`): held open like a watch."""
        key = connection.fileno()
        if not self.keeper.register(key, body, _peer_pid(connection)):
            wire.send(connection, {"error": "malformed keep request"})
            return False
        try:
            wire.send(connection, {"ok": True, "pid": os.getpid()})
        except BaseException:
            self.keeper.unregister(key)
            raise
        connection.setblocking(False)
        self.connections[key] = connection
        selector.register(connection, selectors.EVENT_READ, "registration")
        return True

    def _fork(self, body: dict, descriptors: list[int]) -> dict:
        """A ``fork`` or ``fork-session`` request, forwarded to the zygote; forked here when no
        zygote can be had (a new one is started first when the last one is gone)."""
        if body.get("build") != self.build:
            return {"error": "build", "build": self.build}
        answer = self._fork_by_zygote(body, descriptors) if self.use_zygote else None
        if answer is not None:
            if isinstance(answer.get("pid"), int) and isinstance(answer.get("startTicks"), int):
                self.remote[answer["pid"]] = answer["startTicks"]
            return answer
        # No zygote can be had (none can be forked, or ST2_SEAT_HOST_ZYGOTE=off, said at start):
        # the child is the host's own, tracked in ``children`` and reaped here.
        if body.get("op") == session_fork.OP:
            self._preload_sessions()
            answer = session_fork.serve(body, descriptors, self.build, self.session_entry)
        else:
            answer = fork_module.serve(body, descriptors[0], self.build, self.entry)
        if isinstance(answer.get("pid"), int):
            self.children.add(answer["pid"])
        return answer

    def _fork_by_zygote(self, body: dict, descriptors: list[int]) -> dict | None:
        """The zygote's answer to a fork request (a new zygote started first when the last one
        is gone), or None when the request reached no zygote."""
        if body.get("op") == session_fork.OP and self.session_preload is not None:
            # The wrappers' modules are imported here once, and the zygote replaced by one
            # forked after them: the wrappers then share those pages with the host.
            self._preload_sessions()
            self.zygote.lost()   # it exits; its children keep running
            say("the session wrappers are preloaded; a new zygote forks from here on")
            self._start_zygote()
        answer = self.zygote.request(body, descriptors)
        if answer is None:   # the request reached no zygote
            say("the zygote is gone; forking a new one")
            if self._start_zygote():
                answer = self.zygote.request(body, descriptors)
        return answer

    def _start_zygote(self) -> bool:
        try:
            pid = self.zygote.start()
        except OSError as error:
            say(f"cannot fork a zygote ({error}); forking per-seat processes here")
            return False
        say(f"zygote started as pid {pid}")
        return True

    def _remote_alive(self) -> bool:
        """Whether any child the zygote forked still runs (PID and start ticks, not waitpid)."""
        for pid, ticks in list(self.remote.items()):
            try:
                stat = proc_stat.read(pid)
            except proc_stat.ProcUnavailable:
                continue
            if stat is None or stat.start_ticks != ticks or not stat.running:
                del self.remote[pid]
        return bool(self.remote)

    def _preload_sessions(self) -> None:
        """Import (and rehearse) what a forked session wrapper runs, once, and freeze it."""
        preload, self.session_preload = self.session_preload, None
        if preload is None:
            return
        try:
            preload()
        except Exception as error:  # the wrapper imports what it needs itself
            say(f"preloading the session wrappers failed: {error}")
        gc.collect()
        gc.freeze()

    def _registration_ended(self, selector, key: int) -> None:
        connection = self.connections.get(key)
        if connection is None:
            return
        try:
            if connection.recv(4096):
                return   # a registrant never sends after its request; ignore noise
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        selector.unregister(connection)
        self.hub.unregister(key)
        self.keeper.unregister(key)
        self.peers.pop(key, None)
        del self.connections[key]
        connection.close()

    def _reap(self) -> None:
        while self.children or self.zygote.pid is not None:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                self.zygote.reaped(self.zygote.pid)
                return
            if pid == 0:
                return
            self.children.discard(pid)
            if self.zygote.reaped(pid):
                say(f"the zygote {pid} ended; the next fork starts another")

    def _close(self, lock: RecordLock) -> None:
        path = wire.socket_path(self.directory)
        try:
            if os.stat(path).st_ino == self.bound_inode:   # never a successor's socket
                path.unlink()
        except OSError:
            pass
        if self.listener is not None:
            self.listener.close()
        self.zygote.lost()   # the zygote reads the end of its socketpair and exits
        for key in list(self.connections):
            self.hub.unregister(key)
            self.keeper.unregister(key)
            self.connections.pop(key).close()
        lock.release()


def _peer_pid(connection: socket.socket) -> int | None:
    """The PID of the process on the other end (``SO_PEERCRED``), for ``hello``'s registrants."""
    return wire.peer_pid(connection)
