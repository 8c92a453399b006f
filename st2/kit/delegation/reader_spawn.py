"""Resolving and running the turn-end hook's liveness reader as a bounded child.

The reading is a child process's exit class, for the default reader exactly as for an override: one
code path, so every row of the verdict table is true of both. The default (an empty
``DELEGATION_KIT_LIVENESS_CMD``) is the running st2 itself: a child forked from this process (the
running binary, present by definition) that runs ``st2 check producer-liveness <run-dir>`` through
the same hot-path dispatch ``st2``'s entry point takes and exits with its status. Forking skips a
second interpreter start (what that saves the hook: docs/memory.md §Both install kinds). Its argv,
the one the refusal prints, is the equivalent exec, ``PYTHONPATH=<st2's root> <python> -S -P -m st2
check producer-liveness <run-dir>``, re-runnable by hand: ``-S`` skips the site machinery (the
reader needs the standard library and st2 alone), so ``PYTHONPATH`` names where this st2 was
imported from. An override is an argv (the knob file's ``DELEGATION_KIT_LIVENESS_CMD[]`` lines), spawned directly with no shell and the
run dir appended; it resolves only when its first element is executable (a path carrying a separator
has the execute bit, a bare name is found on PATH), else to no reader.

The child runs in its own session with both streams discarded, under a wait bound applied
unconditionally: a hung reader is killed (its whole process group) and reads as an error, never
as a live producer. A spawn (or fork) the operating system refuses carries the OS's own error.
The forked child sees exactly the environment a spawned one would (the hook's, with the
reader's additions), and exits as ``python -m st2`` would: the verb's status, 1 for an uncaught
exception.

Standard library only; no ``subprocess`` (its import alone costs more than the spawn), and
``signal`` only when a reader is killed.
"""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Mapping
from collections import namedtuple

BOUND_SECONDS = 10.0
BOUND_ENVIRONMENT = "ST2_LIVENESS_READER_BOUND_SECONDS"
"""st2's own seam over the wait bound (not a kit knob): tests shorten it to prove the bound."""


# A namedtuple, not a dataclass: importing dataclasses pulls in inspect, a quarter of a bare
# interpreter start on this per-firing path (benchmarks/hot_paths.py).
class Outcome(namedtuple("Outcome", ("exit_status", "spawn_error"), defaults=(None, None))):
    """What one bounded run of the reader gave: an exit status (int), or a spawn error (str: the
    reader never started), or neither (it ran and did not answer: killed at the bound, ended by
    a signal, or its wait failed)."""

    __slots__ = ()


class Reader(namedtuple("Reader", ("argv", "executable", "environment", "st2_words"), defaults=((), ()))):
    """A resolved reader: its argv (a tuple), the executable spawned, the environment entries it
    adds (a tuple of (name, value) pairs), and — for the default reader only — the st2 words a
    forked child runs instead of exec'ing the argv (empty: spawn the argv)."""

    __slots__ = ()

    def command_line(self) -> str:
        """The invocation as spawned, re-runnable by hand in a shell."""
        assignments = [f"{name}={value}" for name, value in self.environment]
        return " ".join([*assignments, *self.argv])


def st2_root() -> str:
    """The directory this st2 package is imported from (its parent, a sys.path entry)."""
    import st2

    return os.path.dirname(os.path.dirname(os.path.abspath(st2.__file__)))


def default_reader(run_dir: str, environ: Mapping[str, str]) -> Reader:
    path = st2_root()
    inherited = environ.get("PYTHONPATH", "")
    python_path = path + (os.pathsep + inherited if inherited else "")
    words = ("check", "producer-liveness", run_dir)
    argv = (sys.executable, "-S", "-P", "-m", "st2", *words)
    return Reader(argv, sys.executable, (("PYTHONPATH", python_path),), words)


def find_program(name: str, environ: Mapping[str, str]) -> str | None:
    """The executable ``name`` resolves to: a path carrying a separator must be a file with the
    execute bit; a bare name must be found so on ``PATH``. None when it resolves to nothing."""
    if os.sep in name:
        return name if os.path.isfile(name) and os.access(name, os.X_OK) else None
    for directory in environ.get("PATH", os.defpath).split(os.pathsep):
        if not directory:
            continue
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def resolve(command: list[str], run_dir: str, environ: Mapping[str, str]) -> Reader | None:
    """Return the :class:`Reader`, or None when an override resolves to no reader. An empty
    ``command`` is the default reader."""
    if not command:
        return default_reader(run_dir, environ)
    executable = find_program(command[0], environ)
    if executable is None:
        return None
    return Reader((*command, run_dir), executable)


def render_os_error(error: OSError) -> str:
    """The operating system's own rendering of a spawn error, e.g. ``Text file busy (os error 26)``."""
    text = error.strerror or type(error).__name__
    return f"{text} (os error {error.errno})" if error.errno is not None else text


def run_bounded(reader: Reader, environ: Mapping[str, str], bound: float) -> Outcome:
    """Spawn the reader and wait at most ``bound`` seconds for its exit status."""
    environment = dict(environ)
    environment.update(reader.environment)
    devnull_read = (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0)
    devnull_out = (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)
    devnull_err = (os.POSIX_SPAWN_DUP2, 1, 2)
    try:
        if reader.st2_words:
            pid = _fork_st2(reader.st2_words, environment)
        else:
            pid = os.posix_spawn(
                reader.executable, list(reader.argv), environment,
                file_actions=[devnull_read, devnull_out, devnull_err], setsid=True,
            )
    except OSError as error:
        return Outcome(spawn_error=render_os_error(error))
    try:
        status = _wait_bounded(pid, bound)
    except OSError:
        _kill_group(pid)
        return Outcome()
    if status is None:
        _kill_group(pid)
        return Outcome()
    code = os.waitstatus_to_exitcode(status)
    return Outcome(exit_status=code) if code >= 0 else Outcome()


def _fork_st2(words: tuple[str, ...], environment: dict[str, str]) -> int:
    """Fork a child that runs ``st2 <words>`` as the spawned default reader would: its own
    session, stdin, stdout and stderr on /dev/null, ``environment`` as its environment; it exits
    with the verb's status (1 for an uncaught exception) and never returns here."""
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        os.setsid()
        null_in, null_out = os.open(os.devnull, os.O_RDONLY), os.open(os.devnull, os.O_WRONLY)
        os.dup2(null_in, 0)
        os.dup2(null_out, 1)
        os.dup2(null_out, 2)
        # Fresh streams: nothing the parent buffered, and no lock another thread held, carries over.
        sys.stdin, sys.stdout, sys.stderr = (open(0, closefd=False), open(1, "w", closefd=False),
                                             open(2, "w", closefd=False))
        os.environ.clear()
        os.environ.update(environment)
        from st2.front.table import dispatch  # what st2.entry runs for these words

        status = dispatch(words[0], words[1], list(words[2:]))
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else 0 if exit.code is None else 1
    except BaseException:
        status = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(status & 0xFF if isinstance(status, int) else 1)


def _wait_bounded(pid: int, bound: float) -> int | None:
    """The child's wait status, or None when ``bound`` passed first (the child still running)."""
    deadline = time.monotonic() + bound
    try:
        descriptor = os.pidfd_open(pid)
    except (AttributeError, OSError):
        descriptor = None
    if descriptor is not None:
        try:
            poller = select.poll()
            poller.register(descriptor, select.POLLIN)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if poller.poll(remaining * 1000):
                    break
        finally:
            os.close(descriptor)
        return os.waitpid(pid, 0)[1]
    delay = 0.001  # no pidfd: poll the child, finely enough to cost the hook nothing visible
    while True:
        waited, status = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 0.01)


def _kill_group(pid: int) -> None:
    """End the reader and anything it started (it leads its own session), then reap it. (signal
    is imported here: its enum conversions cost every firing a millisecond, and only a reader
    past its bound or a failed wait is killed.)"""
    import signal

    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        try:  # not (yet) leading its own group: the child alone
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


def bound_seconds(environ: Mapping[str, str]) -> float:
    value = environ.get(BOUND_ENVIRONMENT, "")
    try:
        bound = float(value)
    except ValueError:
        return BOUND_SECONDS
    return bound if bound > 0 else BOUND_SECONDS
