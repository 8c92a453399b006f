"""The DING service: ONE host-level process per runtime scope that runs every seat's notifier
loop, each in its own thread, on behalf of the seat's stub (:mod:`st2.ding.stub`).

Why one process for every seat's loop: a notifier forked from the seat host copies a page out
of the host's shared, frozen heap for every object whose reference count it writes as it runs,
while a forked child that only blocks in a read keeps nearly all its pages shared. So each
seat's notifier task is its own small process — the stub, forked by the seat host as every
per-seat process is, with its own session, launch record, log and signals — and the loop itself
runs here, where the interpreter's own pages are paid once for every seat. Each tmux client
spawned from here would copy this process's whole descriptor table before ``exec``, so the
service spawns its clients through :mod:`st2.ding.spawner`'s helpers. (What this costs per seat,
and the delivery latency through it: docs/memory.md §The DING service.)

Started on demand: the first stub that finds no service asks the seat host to fork
``st2 ding-service`` (pre-imported, frozen pages; the host itself stays single-threaded). It
holds ``ding-service.lock`` (``flock``, released by the kernel on any death) before it binds
``ding-service.sock`` (:mod:`st2.ding.service_wire`); a second start finds the lock taken and
exits 0. It raises its ``RLIMIT_NOFILE`` soft limit to the hard one (each seat holds its log,
its stub's connection, its seat lock, its wake pipes and its shared watch's connection) and
gives each seat thread a modest stack.

Per seat (:class:`SeatThread`): the thread waits for any earlier thread of the same seat to end
(a stub SIGKILLed mid-pass is restarted while its old pass finishes: never two notifiers of one
seat at once), then takes the seat's lock (``<scope>/ding-service/<target>.lock``, held across processes by
whatever runs a seat's loop — a thread of this service or of a retired one, or a stub serving
itself), builds the seat's :class:`st2.ding.notifier.Notifier` with
:func:`st2.ding.serve.prepare`, its lines going to the stub's log descriptor, and runs
:func:`st2.ding.notifier.run`, the loop a stub serving itself runs, with a shared seat watch
(:class:`st2.seathost.watch_client.SharedSeatWatch`: no inotify instance of its own). The stub's
``stop`` line (its SIGTERM) or its connection ending (its SIGKILL) sets the thread's stop flag
and writes its wake pipe; the loop's status (0 stopped or session gone, 70 for an exception,
logged with its type, 1 for a target that is not a seat) is sent back as the stub's ``exit``.
One seat's exception ends only that seat's thread.

The service ends when it has served no seat for :data:`IDLE_EXIT_SECONDS`; on ``retire``,
SIGTERM or its socket removed or replaced it stops listening (its socket and lock go to a
successor) and ends once the seats it serves have ended (``st2 down`` of the whole host retires
it after stopping every seat). If it dies (SIGKILL, crash,
OOM) every stub sees its connection end and serves its seat itself. Its loop answers each
stub's ``ping`` at once and serves one request per pass, so a peer trickling a request holds it
at most :data:`st2.seathost.wire.REQUEST_SECONDS`; if it stops answering (SIGSTOP, a wedged
loop) a stub SIGKILLs its process group after :data:`service_wire.HEARTBEAT_BOUND_SECONDS`
(:mod:`st2.ding.stub`, *The heartbeat*), which is the death above.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import socket
import sys
import threading
import time
from pathlib import Path

from st2.ding import service_wire
from st2.ding.control_client import ControlPool
from st2.fs.lock import LockTimeout, RecordLock
from st2.fs.pipe import drain
from st2.seathost import wire

IDLE_EXIT_SECONDS = 60.0
LOCK_WAIT_SECONDS = 10.0
THREAD_STACK_BYTES = 512 * 1024
FAILURE = 70                   # EX_SOFTWARE, as a forked notifier's unexpected exception
TARGET_FAILURE = 1             # what `st2 ding` exits with for a target that is not a seat
WAIT_POLL_SECONDS = 0.2


def say(line: str) -> None:
    print(f"st2 ding-service: {line}", file=sys.stderr, flush=True)


def raise_descriptor_limit() -> int:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit; return the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 16)
    if wanted > soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (OSError, ValueError):
            pass
    return soft


def seat_log(descriptor: int):
    """The notifier's log callable over the stub's log descriptor: one write per line."""
    def log(line: str) -> None:
        try:
            os.write(descriptor, f"st2 ding: {line}\n".encode(errors="replace"))
        except OSError:
            pass
    return log


class SeatThread:
    """One seat's notifier loop in a thread of the service."""

    def __init__(self, service: "DingService", connection: socket.socket, request: service_wire.ServeRequest,
                 log: int, canonical: str, previous: "SeatThread | None") -> None:
        self.service = service
        self.connection: socket.socket | None = connection   # None once the stub's end is gone
        self.fd = connection.fileno()
        self.request = request
        self.log_descriptor = log
        self.log = seat_log(log)
        self.stub = wire.peer_pid(connection)
        self.target = canonical
        self.previous = previous
        self.stopping = False
        self.wake_read, self.wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.watch = None
        self.status: int | None = None
        self.error: str | None = None
        self.inbound = b""                # the stub's bytes past its last whole line
        self.thread = threading.Thread(target=self._main, name=f"ding {canonical}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping = True
        try:
            os.write(self.wake_write, b"s")
        except OSError:
            pass

    @property
    def watching(self) -> bool:
        watch = self.watch
        return bool(watch is not None and watch.active)

    def _main(self) -> None:
        try:
            self.status = self._serve()
        except BaseException as error:   # never a silent death: the seat's own log names it
            self.log(f"{type(error).__name__}: {error}")
            self.status = FAILURE
        finally:
            self.service.ended(self)

    def _wait_for_previous(self) -> bool:
        previous = self.previous
        self.previous = None
        if previous is None or not previous.thread.is_alive():
            return True
        self.log(f"waiting for the previous notifier of {self.target} to finish its pass")
        while previous.thread.is_alive():
            if self.stopping:
                return False
            previous.thread.join(WAIT_POLL_SECONDS)
        return True

    def _take_seat_lock(self) -> RecordLock | None:
        path = service_wire.seat_lock_path(self.service.directory, self.target)
        said = False
        while not self.stopping:
            lock = RecordLock(path, timeout=WAIT_POLL_SECONDS)
            try:
                lock.acquire()
                return lock
            except LockTimeout:
                if not said:
                    self.log(f"another notifier of {self.target} still runs (it holds {path}); waiting for it to end")
                    said = True
        return None

    def _serve(self) -> int:
        from st2.ding.notifier import run
        from st2.ding.serve import TargetError, prepare
        from st2.seathost.watch_client import SharedSeatWatch

        if not self._wait_for_previous():
            return 0
        lock = self._take_seat_lock()
        if lock is None:
            return 0
        try:
            request = self.request
            try:
                prepared = prepare(Path(request.catalog), request.host, request.target, socket=request.socket,
                                   settings=request.settings, log=self.log, pool=self.service.control_pool)
            except TargetError as error:
                self.error = str(error)
                return TARGET_FAILURE
            prepared.announce()
            self.log(f"served by the DING service (pid {os.getpid()}) for this task's pid {self.stub}")
            watch = SharedSeatWatch(prepared.seat.directory, wire.socket_path(self.service.directory),
                                    prepared.notifier.log)
            if not watch.register():
                self.log("no seat host answers; waking on the timer until one does")
            self.watch = watch
            try:
                return run(prepared.notifier, watch, prepared.socket_path, lambda: self.stopping, self.wake_read)
            finally:
                self.watch = None
                watch.close()
        finally:
            lock.release()

    def close(self) -> None:
        for descriptor in (self.wake_read, self.wake_write, self.log_descriptor):
            try:
                os.close(descriptor)
            except OSError:
                pass


class DingService:
    def __init__(self, scope_directory: Path) -> None:
        self.directory = Path(scope_directory)
        self.build = wire.build_id()
        self.listener: socket.socket | None = None
        self.bound_inode: int | None = None
        self.lock: RecordLock | None = None
        self.seats: set[SeatThread] = set()          # every seat thread not yet collected
        self.by_connection: dict[int, SeatThread] = {}   # open stub connection descriptor -> its seat
        self.latest: dict[str, SeatThread] = {}       # target -> its newest seat thread
        self.guard = threading.Lock()
        self.finished: list[SeatThread] = []
        self.stopping = False
        self.retired = False
        self.selector: selectors.BaseSelector | None = None
        self.done_read, self.done_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.drops = wire.DropLog(say)
        self.control_pool = ControlPool()             # every seat's kept tmux control client

    # -- start ---------------------------------------------------------------------------
    def serve(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        lock = RecordLock(service_wire.lock_path(self.directory), timeout=LOCK_WAIT_SECONDS)
        try:
            lock.acquire()
        except LockTimeout:
            say(f"another DING service holds {service_wire.lock_path(self.directory)}; exiting")
            return 0
        self.lock = lock
        self.listener = self._bind()
        limit = raise_descriptor_limit()
        threading.stack_size(THREAD_STACK_BYTES)
        signal_read, signal_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(signal_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        say(f"serving {self.directory} as pid {os.getpid()} (build {self.build}, descriptor limit {limit})")
        try:
            self._loop(signal_read)
        except BaseException as error:   # the threads die with the process: every stub serves itself
            say(f"{type(error).__name__}: {error}; exiting (every stub serves its seat itself)")
            os._exit(FAILURE)
        self._stop_listening()
        self.control_pool.close_all()
        say("stopped")
        return 0

    def _bind(self) -> socket.socket:
        # We hold the lock: whatever answers there is a dead service's socket.
        listener, self.bound_inode = wire.listen(service_wire.socket_path(self.directory), 1024)
        return listener

    def _on_signal(self, number, frame) -> None:  # only records; the loop acts
        self.stopping = True

    # -- the loop ------------------------------------------------------------------------
    def _loop(self, signal_read: int) -> None:
        selector = self.selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, "accept")
        selector.register(signal_read, selectors.EVENT_READ, "signal")
        selector.register(self.done_read, selectors.EVENT_READ, "done")
        idle_since = time.monotonic()
        while True:
            if self.stopping and not self.retired:
                self._retire("SIGTERM: no new seats; the ones served run on until they end")
            if self.seats:
                idle_since = time.monotonic()
            elif self.retired or time.monotonic() - idle_since >= IDLE_EXIT_SECONDS:
                if not self.retired:
                    say(f"no seat served for {IDLE_EXIT_SECONDS:g}s; exiting (the next stub starts another)")
                break
            if not self.retired and not self._still_bound():
                self._retire("my socket was removed or replaced: no new seats")
            for key, _ in selector.select(5.0):
                if key.data == "accept":
                    self._accept()
                elif key.data == "signal":
                    drain(signal_read)
                elif key.data == "done":
                    drain(self.done_read)
                else:
                    self._stub_readable(key.fd)
            self._collect()
        selector.close()

    def _still_bound(self) -> bool:
        try:
            return os.stat(service_wire.socket_path(self.directory)).st_ino == self.bound_inode
        except OSError:
            return False

    def _retire(self, why: str) -> None:
        say(why)
        self.retired = True
        self._stop_listening()

    def _stop_listening(self) -> None:
        if self.listener is not None:
            if self.selector is not None:
                try:
                    self.selector.unregister(self.listener)
                except (KeyError, ValueError):
                    pass
            if self._still_bound():   # never a successor's socket
                try:
                    service_wire.socket_path(self.directory).unlink()
                except OSError:
                    pass
            self.listener.close()
            self.listener = None
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def _accept(self) -> None:
        """One pending request (:func:`wire.answer_one`: a malformed one is dropped and said;
        one per pass, so every stub's ``ping`` is answered between two)."""
        if self.listener is not None:
            wire.answer_one(self.listener, self._handle, self.drops)

    def _handle(self, connection: socket.socket, body: dict, descriptors: list[int]) -> bool:
        """Answer one request; True when the connection stays open (a seat served)."""
        operation = body.get("op")
        if operation == "serve":
            refusal = self._refusal(body, descriptors)
            if refusal is not None:
                for descriptor in descriptors:
                    os.close(descriptor)
                wire.send(connection, refusal)
                return False
            self._start_seat(connection, service_wire.parse_serve(body), descriptors[0])
            return True
        for descriptor in descriptors:
            os.close(descriptor)
        if operation == "hello":
            wire.send(connection, self.hello())
        elif operation == "retire":
            wire.send(connection, {"ok": True})
            if not self.retired:
                self._retire("retired: no new seats; the ones served run on until they end")
        else:
            wire.send(connection, {"error": wire.printable(f"unknown request {operation!r}")})
        return False

    def _refusal(self, body: dict, descriptors: list[int]) -> dict | None:
        if body.get("build") != self.build:
            return {"error": "build", "build": self.build}
        if len(descriptors) != 1:
            return {"error": f"malformed serve request: expected the task's log descriptor, got {len(descriptors)}"}
        from st2.ding.serve import split_target

        try:
            request = service_wire.parse_serve(body)
            split_target(request.target, request.host)
        except ValueError as error:   # TargetError is one
            return {"error": f"malformed serve request: {error}"}
        return None

    def hello(self) -> dict:
        with self.guard:
            rows = sorted(((seat.target, seat.stub, seat.watching) for seat in self.seats),
                          key=lambda row: (row[0], row[1] or 0))
        return {"protocol": service_wire.PROTOCOL, "build": self.build, "pid": os.getpid(),
                "listening": self.listener is not None,
                "serving": [{"target": target, "stub": stub, "watch": watching} for target, stub, watching in rows]}

    def _start_seat(self, connection: socket.socket, request: service_wire.ServeRequest, log: int) -> None:
        from st2.ding.serve import split_target

        canonical = ".".join(split_target(request.target, request.host))
        with self.guard:
            seat = SeatThread(self, connection, request, log, canonical, self.latest.get(canonical))
            self.latest[canonical] = seat
            self.seats.add(seat)
        try:
            wire.send(connection, {"ok": True, "pid": os.getpid()})
        except OSError:   # the stub is already gone: the thread starts stopped and is collected
            seat.connection = None
            seat.stop()
            seat.start()
            raise
        connection.setblocking(False)
        self.by_connection[seat.fd] = seat
        self.selector.register(connection, selectors.EVENT_READ, "stub")
        seat.start()

    def _stub_readable(self, fd: int) -> None:
        """A registered stub's line: ``ping`` is answered with ``pong`` at once, from this loop
        (the stub's heartbeat, :mod:`st2.ding.stub`); ``stop`` (its SIGTERM) stops the seat,
        whose ``exit`` line follows when the loop ends. Its end of the connection ending (its
        SIGKILL) or anything malformed (not a line of :func:`wire.receive`'s rules within
        :data:`service_wire.STUB_LINE_LIMIT` bytes) stops the seat and drops the connection."""
        seat = self.by_connection.get(fd)
        if seat is None or seat.connection is None:
            return
        try:
            data = seat.connection.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:   # the stub is gone (SIGKILLed): stop its seat; nobody is left to tell
            seat.stop()
            self._drop_connection(seat)
            return
        seat.inbound += data
        while b"\n" in seat.inbound:
            line, seat.inbound = seat.inbound.split(b"\n", 1)
            operation = service_wire.stub_operation(line)
            if operation == "ping":
                try:
                    seat.connection.send(service_wire.PONG, socket.MSG_DONTWAIT)
                except OSError:
                    pass   # a stub that reads nothing hears no pong; its own bound is its own
            elif operation == "stop":
                seat.stop()
            else:
                self.drops.dropped(f"the stub of {seat.target} sent {operation}; stopping its seat")
                seat.stop()
                self._drop_connection(seat)
                return
        if len(seat.inbound) > service_wire.STUB_LINE_LIMIT:
            self.drops.dropped(f"the stub of {seat.target} sent an overlong line; stopping its seat")
            seat.stop()
            self._drop_connection(seat)

    def _drop_connection(self, seat: SeatThread) -> None:
        connection, seat.connection = seat.connection, None
        if connection is not None:
            self.by_connection.pop(seat.fd, None)
            try:
                self.selector.unregister(connection)
            except (KeyError, ValueError):
                pass
            connection.close()

    def ended(self, seat: SeatThread) -> None:
        """Called on the seat's own thread as it ends: hand it to the loop."""
        with self.guard:
            self.finished.append(seat)
        try:
            os.write(self.done_write, b"d")
        except OSError:
            pass

    def _collect(self) -> None:
        with self.guard:
            finished, self.finished = self.finished, []
            for seat in finished:
                self.seats.discard(seat)
                if self.latest.get(seat.target) is seat:
                    del self.latest[seat.target]
        for seat in finished:
            connection = seat.connection
            if connection is not None:
                answer = {"exit": seat.status if seat.status is not None else FAILURE}
                if seat.error is not None:
                    answer["error"] = seat.error
                try:
                    connection.setblocking(True)
                    connection.settimeout(wire.TIMEOUT_SECONDS)
                    wire.send(connection, answer)
                except OSError:
                    pass
                self._drop_connection(seat)
            seat.close()

