"""A seat's DING task as a stub: ``st2 ding <runtime-id>`` forked by the seat host hands the
seat's notifier loop to the scope's DING service (:mod:`st2.ding.service`) and blocks on the
connection.

The stub is the task: the seat host forked it exactly as it forked the notifier (own session
and process group, the launch record's PID, the task's log as stdout and stderr), so adoption,
``st2 tasks --json``, ``st2 down <seat>`` and restarts see what they always saw. It asks for a
service of its own build (one of another build is retired, never used), starting one through
the seat host when none answers (one stub at a time, under ``ding-service.start.lock``), and
registers with its log descriptor and its parsed settings (:mod:`st2.ding.service_wire`):

- SIGTERM or SIGINT: it sends ``stop``, waits for the loop's ``exit`` and exits with it;
- its SIGKILL: the service sees the connection end and stops the seat's thread;
- the seat's loop ending (session gone: 0; an exception: 70, logged with its type): the stub
  exits with that status; a target that is not a seat fails as ``st2 ding`` does;
- the service dying (its connection ends with no ``exit``): the stub runs the notifier itself,
  in this process (:func:`st2.ding.serve.serve`, pre-imported), from the seat's ownership record,
  and says so loudly in its log; ``st2 doctor`` names it (``ding-serves-itself``) and
  ``benchmarks/fleet_memory.py`` counts it. So does a stub that can get no service at start
  (socket path past the sun_path bound, no seat host, a refused fork), once.

Whatever runs a seat's loop in this design — a service thread or a stub serving itself — holds
the seat's lock (:func:`st2.ding.service_wire.seat_lock_path`) for the whole loop, so two never
run at once.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time
from pathlib import Path

from st2.ding import service_wire
from st2.ding.notifier import Settings
from st2.fs.lock import LockTimeout, RecordLock
from st2.fs.pipe import drain
from st2.seathost import wire

SUN_PATH_LINUX = 108
START_TIMEOUT_SECONDS = 20.0
START_LOCK_SECONDS = 60.0
POLL_SECONDS = 0.02
ATTEMPTS = 3


def say(line: str) -> None:
    try:
        os.write(2, f"st2 ding: {line}\n".encode(errors="replace"))
    except OSError:
        pass


class NoService(Exception):
    """No DING service of this build can serve this seat (the reason is the message)."""


class Stub:
    def __init__(self, catalog: Path, host: str, runtime_id: str, socket_path: str | None,
                 settings: Settings) -> None:
        from st2.ding.serve import split_target
        from st2.seathost import fork

        self.catalog = Path(catalog)
        self.host = host
        self.runtime_id = runtime_id
        self.socket = socket_path
        self.settings = settings
        seat_host, identity = split_target(runtime_id, host)
        self.target = f"{seat_host}.{identity}"
        self.scope = fork.HOST_SCOPE or _scope_directory(catalog, seat_host)
        self.service_path = service_wire.socket_path(self.scope)
        self.build = wire.build_id()
        self.stopping = False
        self.wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)

    def _on_stop(self, number, frame) -> None:  # only records; the loop acts
        self.stopping = True

    # -- finding (or starting) the service ----------------------------------------------
    def _hello(self) -> dict | None:
        try:
            answer = wire.request(self.service_path, {"op": "hello"}, timeout=2.0)
        except OSError:
            return None
        return answer if answer.get("protocol") == service_wire.PROTOCOL else None

    def _ensure_service(self) -> None:
        """A service of this build listens on the scope's socket; raise :class:`NoService`."""
        answer = self._hello()
        if answer is not None and answer.get("build") == self.build and answer.get("listening"):
            return
        lock = RecordLock(service_wire.start_lock_path(self.scope), timeout=START_LOCK_SECONDS)
        try:
            lock.acquire()
        except LockTimeout as error:
            raise NoService(f"no DING service could be started: {error}") from error
        try:
            answer = self._hello()
            if answer is not None and answer.get("build") == self.build and answer.get("listening"):
                return
            if answer is not None and answer.get("build") != self.build:
                say(f"the DING service pid {answer.get('pid')} runs another build; retiring it")
                try:
                    wire.request(self.service_path, {"op": "retire"}, timeout=2.0)
                except OSError:
                    pass
            self._start_service()
        finally:
            lock.release()

    def _start_service(self) -> None:
        from st2.catalog.layout import CatalogPaths

        logs = CatalogPaths(self.catalog).logs
        logs.mkdir(parents=True, exist_ok=True)
        log = os.open(logs / f"{self.target.split('.', 1)[0]}.ding-service.log",
                      os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        try:
            answer = wire.request(wire.socket_path(self.scope),
                                  {"op": "fork", "argv": ["ding-service", "--scope-directory", str(self.scope)],
                                   "env": dict(os.environ), "cwd": "/", "build": self.build}, (log,))
        except OSError as error:
            raise NoService(f"the seat host on {wire.socket_path(self.scope)} does not answer ({error})") from error
        finally:
            os.close(log)
        if not isinstance(answer.get("pid"), int):
            raise NoService(f"the seat host refused to start the DING service: {answer.get('error')}")
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            hello = self._hello()
            if hello is not None and hello.get("build") == self.build and hello.get("listening"):
                return
            time.sleep(POLL_SECONDS)
        raise NoService(f"the DING service started as pid {answer['pid']} did not answer on {self.service_path} "
                        f"within {START_TIMEOUT_SECONDS:g}s (see {logs}/*.ding-service.log)")

    def _register(self) -> socket.socket:
        """The open registration of this seat with the service; raise :class:`NoService`. The
        first attempt goes straight to the socket (a refusal names another build); a failed one
        makes sure a service of this build listens first."""
        reason = "no attempt"
        for attempt in range(ATTEMPTS):
            if attempt:
                self._ensure_service()
            try:
                connection = wire.connect(self.service_path)
            except OSError as error:
                reason = f"cannot connect to {self.service_path}: {error}"
                continue
            try:
                wire.send(connection, service_wire.serve_request(self.runtime_id, self.catalog, self.host,
                                                                 self.socket, self.settings, self.build), (1,))
                answer, extra = wire.receive(connection)
                for descriptor in extra:
                    os.close(descriptor)
            except OSError as error:
                connection.close()
                reason = f"the DING service ended the registration: {error}"
                continue   # a service exiting as we came in: start another
            if answer.get("ok") is True:
                self.service_pid = answer.get("pid")
                connection.settimeout(None)
                return connection
            connection.close()
            reason = f"the DING service refused this seat: {answer.get('error')}"
            if answer.get("error") != "build":
                break
        raise NoService(reason)

    # -- the task's life -----------------------------------------------------------------
    def run(self) -> int:
        if len(os.fsencode(str(self.service_path))) + 1 > SUN_PATH_LINUX:
            return self.serve_itself(f"no DING service can be had: its socket path {self.service_path} exceeds "
                                     f"the {SUN_PATH_LINUX}-byte sun_path bound")
        try:
            connection = self._register()
        except NoService as error:
            return self.serve_itself(f"no DING service can be had ({error})")
        with connection:
            outcome = self._wait(connection)
        if isinstance(outcome, dict):
            status = outcome.get("exit")
            if isinstance(outcome.get("error"), str):
                from st2.ding.serve import TargetError

                raise TargetError(outcome["error"])
            return status if isinstance(status, int) else service_failure()
        if self.stopping:
            return 0
        return self.serve_itself(f"the DING service (pid {self.service_pid}) is gone")

    def _wait(self, connection: socket.socket) -> dict | None:
        """Block until the service sends the seat's ``exit`` (returned) or the connection ends
        without one (None), forwarding a SIGTERM as ``stop`` once."""
        asked = False
        buffered = b""
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        while True:
            if self.stopping and not asked:
                asked = True
                try:
                    connection.sendall(b'{"op":"stop"}\n')
                except OSError:
                    return None
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            for descriptor, _ in events:
                if descriptor == self.wake_read:
                    drain(self.wake_read)
                    continue
                try:
                    data = connection.recv(4096)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if not data:
                    return None
                buffered += data
                if b"\n" in buffered:
                    import json

                    try:
                        answer = json.loads(buffered.split(b"\n", 1)[0])
                    except ValueError:
                        return {"exit": service_failure("a line that is not JSON")}
                    return answer if isinstance(answer, dict) else {"exit": service_failure("not an object")}

    def serve_itself(self, why: str) -> int:
        """Run the seat's notifier in this process, loudly."""
        from st2.ding.serve import serve

        if self.stopping:
            return 0
        say(f"{why}; SERVING {self.target} MYSELF, in this process (pid {os.getpid()}), from its ownership "
            "record: delivery goes on, and this task now costs a whole notifier's memory until it is restarted "
            "(`st2 doctor` names it: ding-serves-itself)")
        lock = RecordLock(service_wire.seat_lock_path(self.scope, self.target), timeout=0.2)
        said = False
        while True:
            try:
                lock.acquire()
                break
            except LockTimeout:
                if self.stopping:
                    return 0
                if not said:
                    say(f"another notifier of {self.target} still runs; waiting for it to end")
                    said = True
        try:
            return serve(self.catalog, self.host, self.runtime_id, socket=self.socket, settings=self.settings)
        finally:
            lock.release()


def _scope_directory(catalog: Path, host: str) -> Path:
    from st2.runtime.scope import RuntimeScope

    return RuntimeScope(Path(os.path.abspath(catalog)), host).directory


def service_failure(what: str = "no status") -> int:
    say(f"the DING service answered with {what}; exiting 70")
    from st2.ding.service import FAILURE

    return FAILURE


def run_stub(catalog: Path, host: str, runtime_id: str, *, socket: str | None = None,
             settings: Settings = Settings()) -> int:
    return Stub(catalog, host, runtime_id, socket, settings).run()
