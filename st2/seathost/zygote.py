"""The zygote: the seat host's one child that does nothing but fork the per-seat processes.

Why a separate forker: the host keeps working after every fork (requests, every seat's inotify
events, the keeper's timers), and each page it writes after a fork stops being shared with the
children forked before. So right after ``gc.freeze()`` the host forks this quiet copy of itself, and
forwards every ``fork`` and ``fork-session`` request (:mod:`.wire`) to it over a socketpair: the
same JSON line, the same descriptors (``SCM_RIGHTS``). The zygote forks the child with the host's
own child code (:func:`st2.seathost.fork.serve`, :func:`st2.seathost.session_fork.serve`: its own
session and process group; the answer holds the child's PID and start ticks), answers, and blocks in
its next read; it touches few pages, so its children keep sharing the frozen ones (what this buys
per seat: docs/memory.md §The DING service).

Contract of the child side (:func:`serve`, never returns): descriptor 3 is its end of the
socketpair, 0–2 the host's (the host's log), nothing else of the host's stays open; SIGCHLD
reaps its children with ``WNOHANG`` (never while a fork is being answered, so a child that
ends at once still has its stat read); a malformed request (not JSON, not an object, an unknown
``op``, bad fields) gets ``{"error": …}``, one line, never a traceback; the end of the host's
side (the host ended, even by SIGKILL) ends the zygote, and its children keep running
(re-parented). The zygote imports nothing: the native session wrappers' modules are the host's
(imported and rehearsed at the first ``fork-session``, then frozen), and the host then replaces
its zygote by one forked after that preload, so the wrappers share those pages with the host.

Host side (:class:`Link`): starts the zygote, forwards one request at a time, and reports a
zygote that is gone (None) so the host can start another or fork directly (also what the host
does for every fork with ``ST2_SEAT_HOST_ZYGOTE=off``: no zygote at all, said once at its start). The host tracks
the zygote's children by PID and start ticks (they are not its children to wait for).
"""

from __future__ import annotations

import os
import signal
import socket
from typing import Callable

from st2.seathost import fork as fork_module
from st2.seathost import session_fork
from st2.seathost import wire

SOCKET_FD = 3
SESSION_TIMEOUT_SECONDS = 30.0   # the first fork-session waits for the wrappers' preload


class Link:
    """The host's end: one zygote at a time."""

    def __init__(self, entry: Callable[[list[str]], int], session_entry: Callable[[list[str]], int] | None) -> None:
        self.entry, self.session_entry = entry, session_entry
        self.pid: int | None = None
        self.connection: socket.socket | None = None

    def start(self) -> int:
        """Fork a zygote; its PID. Raise OSError when it cannot be forked."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        fork_module.flush_streams()
        try:
            pid = os.fork()
        except OSError:
            ours.close()
            theirs.close()
            raise
        if pid == 0:  # pragma: no cover - the zygote
            status = fork_module.CHILD_FAILURE
            try:
                os.dup2(theirs.fileno(), SOCKET_FD)
                os.closerange(SOCKET_FD + 1, fork_module._descriptor_limit())
                status = serve(socket.socket(fileno=SOCKET_FD), self.entry, self.session_entry)
            finally:
                os._exit(status)
        theirs.close()
        ours.set_inheritable(False)
        self.pid, self.connection = pid, ours
        return pid

    def request(self, body: dict, descriptors: list[int]) -> dict | None:
        """The zygote's answer to one fork request, or None when it is gone (the caller starts
        another or forks itself). An answer that never came after the request went out is an
        error answer, never a retry: the zygote may have forked the child already."""
        if self.connection is None:
            return None
        timeout = SESSION_TIMEOUT_SECONDS if body.get("op") == session_fork.OP else wire.TIMEOUT_SECONDS
        self.connection.settimeout(timeout)
        try:
            wire.send(self.connection, body, tuple(descriptors))
        except OSError:
            self.lost()
            return None
        try:
            answer, extra = wire.receive(self.connection)
        except OSError as error:
            self.lost()
            return {"error": f"the zygote did not answer: {error}"}
        for descriptor in extra:
            os.close(descriptor)
        return answer

    def lost(self) -> None:
        """Forget the zygote (it died or broke the protocol); closing our end ends a live one."""
        if self.connection is not None:
            self.connection.close()
        self.connection = None

    def reaped(self, pid: int) -> bool:
        """True when ``pid`` (just reaped by the host) was the zygote."""
        if pid != self.pid:
            return False
        self.pid = None
        self.lost()
        return True


_busy = [False]      # a fork is being answered: SIGCHLD only notes a pending reap
_pending = [False]


def serve(connection: socket.socket, entry: Callable[[list[str]], int],
          session_entry: Callable[[list[str]], int] | None) -> int:  # pragma: no cover - the zygote
    """The zygote's loop (see the module docstring); returns 0 when the host's end closes."""
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, _on_child)
    build = wire.build_id()
    connection.settimeout(None)
    while True:
        _reap()
        try:
            body, descriptors = wire.receive(connection)
        except wire.WireClosed:
            return 0
        except OSError as error:
            answer = {"error": f"malformed zygote request: {error}"}
            descriptors = []
        else:
            _busy[0] = True
            try:
                answer = _answer(body, descriptors, build, entry, session_entry)
            finally:
                for descriptor in descriptors:
                    try:
                        os.close(descriptor)
                    except OSError:
                        pass
                _busy[0] = False
        try:
            wire.send(connection, answer)
        except OSError:
            return 0


def _answer(body: dict, descriptors: list[int], build: str, entry, session_entry) -> dict:
    operation = body.get("op")
    if operation == "fork":
        if len(descriptors) != 1:
            return {"error": "a fork request carries 1 descriptor"}
        return fork_module.serve(body, descriptors[0], build, entry)
    if operation == session_fork.OP:
        return session_fork.serve(body, descriptors, build, session_entry)
    return {"error": f"unknown zygote request {operation!r}"}


def _on_child(number, frame) -> None:  # pragma: no cover - the zygote
    if _busy[0]:
        _pending[0] = True
    else:
        _reap()


def _reap() -> None:
    _pending[0] = False
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
