"""A native seat's session wrapper forked from the pre-imported seat host.

A Codex or opencode wrapper (``st2 driver codex-session`` / ``opencode-session``) needs no
controlling terminal: its harness is a headless server, and what the wrapper needs of the pane
is the terminal's descriptors (read the keyboard, render the view). opencode's own TUI, which
does need it, is run by the pane anchor on the wrapper's request
(:mod:`st2.drivers.opencode.attach_anchor`).
So the pane process asks the host (:mod:`st2.drivers.session_handoff`, request ``fork-session``)
to fork the wrapper from the pages the host imported before ``gc.freeze()``, and then becomes a
tiny ``/bin/sh`` anchor that holds the pane for the wrapper's life.

The request (:mod:`.wire`): ``{"op": "fork-session", "argv", "env", "cwd", "umask", "encoding",
"errors", "build"}`` with exactly four descriptors: the pane's stdin, stdout and stderr (the
terminal) and the wrapper's end of the anchor's status socket; the answer ``{"pid",
"startTicks"}`` or ``{"error"}`` (``"build"`` when the host runs another build). The child:

- its own session and process group (``setsid``), so no group signal meant for the pane or
  for the host's other children reaches it, and it never acquires the pane's terminal as a
  controlling terminal (reads, writes, termios and ``TIOCGWINSZ`` work on the descriptor all
  the same; the wrappers use neither SIGWINCH nor SIGINT, which the terminal would send to the
  pane's foreground group: the anchor ignores ^C, as a wrapper in the pane does);
- the terminal as 0/1/2 with fresh ``sys.stdin/stdout/stderr`` over them in the pane's encoding
  (line-buffered on a terminal, as the interpreter would open them), the status socket as
  descriptor 3, no descriptor of the host's, the pane's working directory, umask and whole
  environment, default signal dispositions, fresh randomness;
- the anchor watched without a thread: descriptor 3 is armed ``O_ASYNC`` with ``F_SETSIG`` =
  SIGTERM, so when the anchor's end closes (the pane process died: the supervisor's group
  SIGKILL, a killed pane) the kernel sends the wrapper SIGTERM and its ordinary stop path runs
  (the server's group stopped, the ``ended`` record written) — never an orphan wrapper
  outliving its task. An anchor already gone when the child starts is the same SIGTERM;
- the same wrapper core a wrapper in the pane runs (the host's ``session_entry``,
  :func:`st2.cli.seat_host.run_forked_session`); just before it ends, ``status N`` and a
  newline on descriptor 3, which the anchor exits with.

The host reaps the child like every fork; a SIGKILLed host leaves it running (re-parented).
What differs from a wrapper that is the pane process: its ``/proc/<pid>/cmdline`` is the
host's (``st2 seat-host …``; the anchor's names its PID), it is not in the pane's process tree
(``benchmarks/fleet_memory.py`` and the lab's crash helper find it through the anchor), and
under the systemd transport it lives in the host's scope, not the task's — stopping the task's
scope ends the anchor, which ends the wrapper as above.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable

from st2.process import proc_stat
from st2.seathost import fork as fork_module

OP = "fork-session"
STATUS_FD = 3
DESCRIPTORS = 4   # stdin, stdout, stderr, the wrapper's end of the status socket
REPLY_FD = 4
"""A fifth descriptor, when sent, is the read end of the pipe a TUI-running pane anchor answers
on; the child has it as descriptor 4 and :data:`replies` says so (the entry adopts it,
:func:`st2.cli.seat_host.run_forked_session`)."""
replies = False


def valid(body: dict, descriptors: list[int]) -> str | None:
    """Why ``body`` is not a well-formed fork-session request, or None."""
    words, environment, directory = body.get("argv"), body.get("env"), body.get("cwd")
    if len(descriptors) not in (DESCRIPTORS, DESCRIPTORS + 1):
        return f"a fork-session request carries {DESCRIPTORS} descriptors, or {DESCRIPTORS + 1} with a reply pipe"
    if not (isinstance(words, list) and words and all(isinstance(word, str) for word in words)
            and isinstance(environment, dict) and all(isinstance(value, str) for value in environment.values())
            and isinstance(directory, str)):
        return "malformed fork-session request"
    if not (isinstance(body.get("umask"), int) and not isinstance(body.get("umask"), bool)
            and 0 <= body["umask"] <= 0o777 and isinstance(body.get("encoding"), str)
            and isinstance(body.get("errors"), str)):
        return "malformed fork-session request"
    return None


def serve(body: dict, descriptors: list[int], build: str, entry: Callable[[list[str]], int] | None) -> dict:
    """The host's answer to one fork-session request: fork a child running ``entry(argv)`` (the
    caller closes ``descriptors`` and records the child for reaping)."""
    if body.get("build") != build:
        return {"error": "build", "build": build}
    if entry is None:
        return {"error": "this seat host forks no session wrappers"}
    problem = valid(body, descriptors)
    if problem is not None:
        return {"error": problem}
    fork_module.flush_streams()
    try:
        pid = os.fork()
    except OSError as error:
        return {"error": f"fork failed: {error}"}
    if pid == 0:  # pragma: no cover - runs in the child
        status = fork_module.CHILD_FAILURE
        try:
            _become_wrapper(body, descriptors)
            status = fork_module._run(entry, list(body["argv"]))
            _report(status)
        finally:
            os._exit(status)
    stat = proc_stat.read(pid)
    return {"pid": pid, "startTicks": stat.start_ticks if stat is not None else 0}


def _become_wrapper(body: dict, descriptors: list[int]) -> None:  # pragma: no cover - the child
    import fcntl

    os.setsid()
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # Out of the way first (a received descriptor may already sit at 0–3), then into place.
    high = [fcntl.fcntl(descriptor, fcntl.F_DUPFD_CLOEXEC, 16) for descriptor in descriptors]
    for target, descriptor in enumerate(high):
        os.dup2(descriptor, target)
    os.closerange(len(high), fork_module._descriptor_limit())
    for descriptor in range(STATUS_FD, len(high)):
        os.set_inheritable(descriptor, False)   # the harness's server and tools never hold the anchor's
    global replies
    replies = len(high) > REPLY_FD
    os.chdir(body["cwd"])
    os.umask(body["umask"])
    os.environ.clear()
    os.environ.update({str(key): value for key, value in body["env"].items()})
    import time

    time.tzset()
    _reopen_streams(body["encoding"], body["errors"])
    import random

    random.seed()
    _watch_anchor()


def _reopen_streams(encoding: str, errors: str) -> None:  # pragma: no cover - the child
    """``sys.stdin/stdout/stderr`` over the terminal, as the interpreter opens them at start."""
    import io

    def text(descriptor: int, mode: str, stream_errors: str):
        try:
            raw = io.FileIO(descriptor, mode, closefd=False)
        except OSError:
            return None
        binary = io.BufferedWriter(raw) if mode == "w" else io.BufferedReader(raw)
        return io.TextIOWrapper(binary, encoding=encoding, errors=stream_errors,
                                line_buffering=mode == "w" and (raw.isatty() or descriptor == 2))

    sys.stdin = text(0, "r", errors)
    sys.stdout = text(1, "w", errors)
    sys.stderr = text(2, "w", "backslashreplace")


def _watch_anchor() -> None:  # pragma: no cover - the child
    """The kernel sends SIGTERM when the anchor's end of the status socket closes."""
    import fcntl
    import select

    fcntl.fcntl(STATUS_FD, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(STATUS_FD, fcntl.F_SETSIG, signal.SIGTERM)
    fcntl.fcntl(STATUS_FD, fcntl.F_SETFL, fcntl.fcntl(STATUS_FD, fcntl.F_GETFL) | os.O_ASYNC)
    ready = select.poll()
    ready.register(STATUS_FD, select.POLLIN)
    if ready.poll(0):   # the anchor is already gone (it never writes): the same stop
        os.kill(os.getpid(), signal.SIGTERM)


def _report(status: int) -> None:  # pragma: no cover - the child
    try:
        os.write(STATUS_FD, f"status {status}\n".encode())
    except OSError:
        pass   # the anchor is gone; nobody waits for the status
