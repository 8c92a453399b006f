"""A seat's DING task as a stub: ``st2 ding <runtime-id>`` forked by the seat host hands the
seat's notifier loop to the scope's DING service (:mod:`st2.ding.service`) and blocks on the
connection.

The stub is the task: the seat host forks it as it forks every per-seat process (own session and
process group, the launch record's PID, the task's log as stdout and stderr), so adoption, ``st2
tasks --json``, ``st2 down <seat>`` and restarts treat it as any other task. It asks for a service
of its own build (one of another build is retired, never used), starting one through the seat host
when none answers (one stub at a time, under ``ding-service.start.lock``), and registers with its
log descriptor and its parsed settings (:mod:`st2.ding.service_wire`):

- SIGTERM or SIGINT: it sends ``stop``, waits for the loop's ``exit`` and exits with it;
- its SIGKILL: the service sees the connection end and stops the seat's thread;
- the seat's loop ending (session gone: 0; an exception: 70, logged with its type): the stub
  exits with that status; a target that is not a seat fails as ``st2 ding`` does;
- the service unresponsive (stopped, wedged): a registration it leaves unanswered for
  :data:`service_wire.HEARTBEAT_BOUND_SECONDS` is killed as below and the stub registers with the
  fresh service it then starts; once registered, the stub pings it every
  :data:`service_wire.HEARTBEAT_SECONDS`, and a ping left unanswered for
  :data:`service_wire.HEARTBEAT_BOUND_SECONDS` makes the stub SIGKILL the service's process group
  (see *The heartbeat* below), which ends its connection: the next case;
- the service dying (its connection ends with no ``exit``): the stub runs the notifier itself,
  in this process (:func:`st2.ding.serve.serve`, pre-imported), from the seat's ownership record,
  and says so loudly in its log; ``st2 doctor`` names it (``ding-serves-itself``) and
  ``benchmarks/fleet_memory.py`` counts it. So does a stub that can get no service at start
  (socket path past the sun_path bound, no seat host, a refused fork), once.

Whatever runs a seat's loop — a service thread or a stub serving itself — holds
the seat's lock (:func:`st2.ding.service_wire.seat_lock_path`) for the whole loop, so two never
run at once.

The heartbeat. A stopped service holds every seat's lock while running none of their loops, so
no stub can serve around it; only its death frees the locks. Every registered stub is its own
judge and its own executioner, because any process may be SIGKILLed (the seat host, the
supervisor, other stubs): a stub that is alive and whose ping went unanswered for the bound
kills the service itself, and one stub is enough. The service's identity is taken when it
answers the registration: its PID from the connection (``SO_PEERCRED``, the listener's creator)
equal to the answer's ``pid``, a pidfd opened on it then, and its process group (its own session,
forked as every per-seat process is). The kill is ``killpg(group, SIGKILL)`` only while that
pidfd shows the process alive (a dead service's group number is never signalled; a number is not
reused while any process of the group lives), then ``pidfd_send_signal`` too; just before, it
publishes the kill record (:mod:`st2.ding.service_killed`), so each other stub, seeing only its
connection end, says in its log that the service was killed and by whom. SIGKILL ends a
stopped process at once, and the whole group goes, so no tmux client it had started types after
the takeover; the kernel releases the seat locks; every stub sees its connection end and serves
its seat itself from the ownership record, whose phases make the paste exactly-once across a
death at any instant (:mod:`st2.ding.ownership`). A SIGCONT that comes later finds no process.
The next stub to register (a restarted task, a new seat) starts a fresh service through the
seat host as at first; stubs already serving themselves stay so until they are restarted. The
bound (10 s; a ping every 2 s, so a stop is acted on 8-12 s after it comes) is far above a loaded
service's answer time: a false kill costs every seat a whole notifier's memory. (What the pings
cost, and the time from a stop to the next notice: docs/memory.md §The DING service.)
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
        self.killed = None                 # the kill record this stub's heartbeat published
        self.service_pidfd = self.service_group = self.service_ticks = None
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
        from st2.fs.log import open_log

        logs = CatalogPaths(self.catalog).logs
        log = open_log(logs / f"{self.target.split('.', 1)[0]}.ding-service.log")
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
                connection.settimeout(service_wire.HEARTBEAT_BOUND_SECONDS)
                answer, extra = wire.receive(connection)
                for descriptor in extra:
                    os.close(descriptor)
            except wire.WireTimeout as error:   # a stopped service holding the scope: the heartbeat's kill
                self.service_pid = wire.peer_pid(connection)
                if self._identify_service(connection, claimed=False):
                    self._kill_unresponsive("this seat's registration")
                connection.close()
                reason = f"the DING service did not answer the registration: {error}"
                continue   # killed: the next attempt starts another
            except OSError as error:
                connection.close()
                reason = f"the DING service ended the registration: {error}"
                continue   # a service exiting as we came in: start another
            if answer.get("ok") is True:
                self.service_pid = answer.get("pid")
                self._identify_service(connection)
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
        if self.service_pidfd is not None:
            os.close(self.service_pidfd)
            self.service_pidfd = None
        if isinstance(outcome, dict):
            status = outcome.get("exit")
            if isinstance(outcome.get("error"), str):
                from st2.ding.serve import TargetError

                raise TargetError(outcome["error"])
            return status if isinstance(status, int) else service_failure()
        if self.stopping:
            return 0
        from st2.ding import service_killed

        killed = self.killed or service_killed.read(self.scope)
        if service_killed.names(killed, self.service_pid, self.service_ticks):
            return self.serve_itself(killed.says())
        return self.serve_itself(f"the DING service (pid {self.service_pid}) is gone")

    def _identify_service(self, connection: socket.socket, claimed: bool = True) -> bool:
        """Take the service's identity for the heartbeat's kill: its PID by ``SO_PEERCRED``,
        equal to the one its answer claimed (``claimed``) or, for a service that answered
        nothing, the holder of ``ding-service.lock``; a pidfd on it and its process group. False
        without it (a PID that does not agree, no pidfd): the stub can only wait for its death."""
        from st2.fs.lock import holders
        from st2.process import proc_stat

        if self.service_pidfd is not None:
            os.close(self.service_pidfd)
        self.service_pidfd = self.service_group = self.service_ticks = None
        peer = wire.peer_pid(connection)
        agrees = peer == self.service_pid if claimed else peer in holders(service_wire.lock_path(self.scope))
        if peer is None or peer <= 1 or not agrees:
            expected = self.service_pid if claimed else "ding-service.lock holder"
            say(f"the DING service's connection names pid {peer}, not the service's {expected}: an unresponsive "
                "service will not be killed by this stub")
            return False
        try:
            self.service_pidfd = os.pidfd_open(peer)
            self.service_group = os.getpgid(peer)
            stat = proc_stat.read(peer)
            self.service_ticks = stat.start_ticks if stat is not None else None
        except (OSError, AttributeError) as error:
            say(f"cannot watch the DING service pid {peer} ({error}): an unresponsive service will not be "
                "killed by this stub")
            return False
        return True

    def _kill_unresponsive(self, what: str) -> None:
        say(f"the DING service (pid {self.service_pid}) left {what} unanswered for "
            f"{service_wire.HEARTBEAT_BOUND_SECONDS:g}s ({_state(self.service_pid)}); SIGKILLing its "
            f"process group {self.service_group} so its seat locks free")
        self._kill_service()

    def _kill_service(self) -> None:
        """SIGKILL the unresponsive service's process group (see *The heartbeat*), its kill
        record (:mod:`st2.ding.service_killed`) published first so every other stub can say why."""
        from st2.ding import service_killed

        pidfd, group = self.service_pidfd, self.service_group
        if pidfd is None:
            return
        if select.select([pidfd], [], [], 0)[0]:
            return   # it has ended: its connection's end follows
        self.killed = service_killed.Killed(self.service_pid, self.service_ticks or 0, os.getpid(),
                                            service_wire.HEARTBEAT_BOUND_SECONDS)
        try:
            self.killed = service_killed.write(self.scope, self.killed)
        except OSError as error:   # the kill is what frees the seats; the record only explains it
            say(f"cannot write {service_killed.path(self.scope)} ({error}); killing all the same")
        if group is not None and group > 1 and group != os.getpgrp():
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass

    def _wait(self, connection: socket.socket) -> dict | None:
        """Block until the service sends the seat's ``exit`` (returned) or the connection ends
        without one (None), forwarding a SIGTERM as ``stop`` once and pinging every
        :data:`service_wire.HEARTBEAT_SECONDS`: a ping unanswered for
        :data:`service_wire.HEARTBEAT_BOUND_SECONDS` kills the service (:meth:`_kill_service`),
        and the connection's end follows."""
        asked = False
        buffered = b""
        poller = select.poll()
        poller.register(connection.fileno(), select.POLLIN)
        poller.register(self.wake_read, select.POLLIN)
        next_ping = time.monotonic() + service_wire.HEARTBEAT_SECONDS
        unanswered_since: float | None = None    # when the ping now unanswered went out
        killed = False
        while True:
            if self.stopping and not asked:
                asked = True
                try:
                    connection.send(service_wire.STOP, socket.MSG_DONTWAIT)
                except OSError:
                    return None
            now = time.monotonic()
            if unanswered_since is None and now >= next_ping:
                try:
                    connection.send(service_wire.PING, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    pass   # nothing read for long: the bound runs from the first ping unanswered
                except OSError:
                    return None
                unanswered_since, next_ping = now, now + service_wire.HEARTBEAT_SECONDS
            due = next_ping if unanswered_since is None else unanswered_since + service_wire.HEARTBEAT_BOUND_SECONDS
            try:
                events = poller.poll(max(0.0, due - time.monotonic()) * 1000 + 1)
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
                while b"\n" in buffered:
                    line, buffered = buffered.split(b"\n", 1)
                    answer = service_wire.service_line(line)
                    if answer is None:   # a pong: the service's loop runs
                        unanswered_since = None
                        continue
                    if "malformed" in answer:
                        service_failure(answer["malformed"])
                    return answer
                if len(buffered) > service_wire.STUB_LINE_LIMIT:
                    return {"exit": service_failure("an overlong line")}
            if (not killed and unanswered_since is not None
                    and time.monotonic() - unanswered_since >= service_wire.HEARTBEAT_BOUND_SECONDS):
                killed = True
                self._kill_unresponsive("a ping")

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


def _state(pid: int | None) -> str:
    """The service's state as ``/proc`` tells it, for the kill's log line."""
    from st2.process import proc_stat

    try:
        stat = proc_stat.read(pid) if isinstance(pid, int) else None
    except proc_stat.ProcUnavailable:
        stat = None
    if stat is None:
        return "no such process"
    return "stopped" if stat.state in "Tt" else f"state {stat.state}"


def service_failure(what: str = "no status") -> int:
    say(f"the DING service answered with {what}; exiting 70")
    from st2.ding.service import FAILURE

    return FAILURE


def run_stub(catalog: Path, host: str, runtime_id: str, *, socket: str | None = None,
             settings: Settings = Settings()) -> int:
    return Stub(catalog, host, runtime_id, socket, settings).run()
