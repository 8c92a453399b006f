"""One per-seat process forked from the pre-imported seat host.

The child is a real, separate process exactly as a spawned ``st2 <verb> …`` would be: its own
session and process group (``setsid``; the PID is the group id ``st2 down`` and the supervisor
kill), stdin ``/dev/null``, stdout and stderr the task's log, the task's working directory and
its whole environment (replacing the host's), default signal dispositions, no descriptor of the
host's (listening socket, inotify instance, connections, lock), fresh randomness. Then it runs
the CLI words it was asked for through the same entry the ``st2`` executable uses and exits
with their status. What it shares with the host and its siblings are the copy-on-write pages of
the modules the host imported before ``gc.freeze()``.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Callable

from st2.process import proc_stat

CHILD_FAILURE = 70   # EX_SOFTWARE: the child could not even be set up
FORKED = False       # True in a child: a forked ``st2 ding`` runs as a stub (st2.ding.stub)
HOST_SCOPE = None    # the forking seat host's scope directory (set by ``st2 seat-host``)


def serve(body: dict, log: int, build: str, entry: Callable[[list[str]], int]) -> dict:
    """The answer to one ``fork`` request (:mod:`.wire`): fork a child running ``entry(argv)``
    and answer ``{"pid", "startTicks"}``, or ``{"error"}`` for another build, a malformed
    request or a failed fork (the caller closes ``log`` and keeps the child's PID)."""
    if body.get("build") != build:
        return {"error": "build", "build": build}
    words, environment, directory = body.get("argv"), body.get("env"), body.get("cwd")
    if not (isinstance(words, list) and all(isinstance(word, str) for word in words) and words
            and isinstance(environment, dict) and isinstance(directory, str)):
        return {"error": "malformed fork request"}
    try:
        pid, ticks = fork(words, {str(k): str(v) for k, v in environment.items()}, directory, log, entry)
    except OSError as error:
        return {"error": f"fork failed: {error}"}
    return {"pid": pid, "startTicks": ticks}


def fork(words: list[str], environment: dict[str, str], directory: str, log: int,
         entry: Callable[[list[str]], int]) -> tuple[int, int]:
    """Fork a child running ``entry(words)``; return its PID and start ticks. The caller
    reaps it. Raise OSError when the fork fails."""
    flush_streams()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        status = CHILD_FAILURE
        try:
            _become_task(environment, directory, log)
            status = _run(entry, words)
        finally:
            os._exit(status)
    # The child cannot have been reaped yet (the host's loop and the zygote reap only between
    # requests), so its stat is there.
    stat = proc_stat.read(pid)
    return pid, stat.start_ticks if stat is not None else 0


def flush_streams() -> None:
    """Flush ``sys.stdout`` and ``sys.stderr`` (before a fork, so no buffered line is written
    twice; and before a child exits)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def _become_task(environment: dict[str, str], directory: str, log: int) -> None:  # pragma: no cover
    global FORKED
    FORKED = True
    os.setsid()
    signal.set_wakeup_fd(-1)
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, _descriptor_limit())
    os.chdir(directory)
    os.environ.clear()
    os.environ.update(environment)
    import random

    random.seed()


def _descriptor_limit() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        return 65536


def _run(entry: Callable[[list[str]], int], words: list[str]) -> int:  # pragma: no cover
    try:
        status = entry(list(words))
    except SystemExit as exit_:
        code = exit_.code
        status = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as error:  # never a silent death: the log names it
        try:
            sys.stderr.write(f"st2 seat-host child: {type(error).__name__}: {error}\n")
        except (OSError, ValueError):
            pass
        status = CHILD_FAILURE
    flush_streams()
    return int(status) & 0xFF
