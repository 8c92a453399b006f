"""Operator hooks over fleet events: the ``notify`` blocks of ``catalog.kdl``
(:class:`st2.declarations.catalog.NotifyHook`).

For each journaled event whose kind a hook names, the hook's argv runs with the event's JSON
line (:meth:`st2.events.event.FleetEvent.line`, newline-terminated) on stdin and
``ST2_EVENT_KIND``, ``ST2_EVENT_SEAT``, ``ST2_EVENT_FROM``, ``ST2_EVENT_TO``, ``ST2_EVENT_SEQ`` in
its environment (the hook is run by ``sh``, which reports its exit status on a pipe). Never inline in the engine or the reconcile pass: :meth:`HookRunner.submit`
only enqueues (a bounded queue; an event that finds it full is dropped and logged) and one
worker thread runs the hooks, each in its own session and process group, killed as a group
past its ``timeout``. At most one run per hook, seat and kind per ``rate-limit`` (the rest are
logged as suppressed). Every failure — cannot start, non-zero exit, killed on timeout — is one
line in ``<runtime scope>/events/notify.log`` (:func:`st2.fs.log.append_line`) and on the
supervisor's output; nothing a hook does can block or fail the supervisor.
"""

from __future__ import annotations

import os
import queue
import select
import signal
import subprocess
import tempfile
import threading
import time
from datetime import datetime, timezone
from typing import Callable

from st2.catalog.location import CatalogLocation
from st2.declarations.catalog import NotifyHook, load_catalog_declaration
from st2.events import journal
from st2.events.event import FleetEvent
from st2.fs.log import append_line

QUEUE_BOUND = 256
STDERR_SHOWN = 200  # bytes of a failed hook's stderr that its log line keeps
_STOP = object()


def _stamp() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _value(value) -> str:
    return "" if value is None else str(value)


def _feed(child: subprocess.Popen, data: bytes) -> None:
    """Give the hook its stdin without ever blocking on it (an event line fits a pipe's buffer;
    a hook that exits unread is no error)."""
    try:
        os.set_blocking(child.stdin.fileno(), False)
        child.stdin.write(data)
    except (BrokenPipeError, BlockingIOError, OSError):
        pass
    finally:
        try:
            child.stdin.close()
        except OSError:
            pass


def _read_status(descriptor: int, timeout: float) -> int | None:
    """The exit status the wrapping shell writes, or None when none came within ``timeout``."""
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        readable, _, _ = select.select([descriptor], [], [], remaining)
        if not readable:
            return None
        chunk = os.read(descriptor, 64)
        if not chunk:  # the shell died without a word (killed from outside)
            return None
        data += chunk
    text = data.decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _collect(child: subprocess.Popen) -> None:
    """Reap the wrapping shell if the supervisor's reaper has not already."""
    try:
        child.wait(timeout=5)
    except (subprocess.TimeoutExpired, ChildProcessError):
        pass


class HookRunner:
    def __init__(self, location: CatalogLocation, scope, *, say: Callable[[str], None] = lambda line: None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.location = location
        self.log_path = str(journal.directory_of(scope) / journal.NOTIFY_LOG)
        self.say = say
        self.monotonic = monotonic
        self.hooks: tuple[NotifyHook, ...] = ()
        self.last_run: dict[tuple[int, str, str], float] = {}
        self.queue: queue.Queue = queue.Queue(maxsize=QUEUE_BOUND)
        self._child: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._refused = False
        self.reload()

    def reload(self) -> None:
        """Re-read the hooks from ``catalog.kdl``; a malformed file keeps none and says so once
        (``st2 validate`` names every problem with its line and column)."""
        declaration, diagnostics = load_catalog_declaration(self.location.root)
        errors = [diagnostic for diagnostic in diagnostics if diagnostic.severity == "error"]
        if errors:
            if not self._refused:
                self.report(f"catalog.kdl does not validate ({str(errors[0]).splitlines()[0]}); no notify hook runs "
                            "until it does")
            self._refused = True
            self.hooks = ()
            return
        self._refused = False
        if declaration.notify != self.hooks:
            self.last_run.clear()
        self.hooks = declaration.notify

    def report(self, line: str) -> None:
        append_line(self.log_path, f"{_stamp()} {line}\n")
        self.say(f"notify: {line}")

    def submit(self, events: list[FleetEvent]) -> None:
        """Enqueue the runs ``events`` call for; never blocks."""
        for item in events:
            for index, hook in enumerate(self.hooks):
                if item.kind not in hook.kinds:
                    continue
                now = self.monotonic()
                limit_key = (index, item.seat or "", item.kind)
                last = self.last_run.get(limit_key)
                if last is not None and now - last < hook.rate_limit_seconds:
                    self.report(f"{hook.where}: {item.kind} {item.seat or 'fleet'} #{item.seq} suppressed "
                                f"(rate-limit {hook.rate_limit_seconds:g}s per seat and kind)")
                    continue
                try:
                    self.queue.put_nowait((hook, item))
                except queue.Full:
                    self.report(f"{hook.where}: {item.kind} {item.seat or 'fleet'} #{item.seq} dropped "
                                f"({QUEUE_BOUND} runs already waiting)")
                    continue
                self.last_run[limit_key] = now
                self._ensure_worker()

    def _ensure_worker(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="st2-notify", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            entry = self.queue.get()
            if entry is _STOP:
                return
            hook, item = entry
            try:
                self.run(hook, item)
            except Exception as error:  # a hook's fault is reported, never raised
                self.report(f"{hook.where}: {item.kind} #{item.seq}: {type(error).__name__}: {error}")

    def run(self, hook: NotifyHook, item: FleetEvent) -> int | None:
        """Run one hook for one event; its exit status, None when it was killed or gave none.

        The hook runs under ``sh``, which writes the hook's exit status to a pipe: the
        supervisor reaps every child it has (``waitpid(-1)``), so the shell's own exit status
        could be taken before this thread asks for it; the pipe's cannot. The hook itself never
        holds the pipe, so a daemon it leaves behind cannot make a finished hook look hung."""
        label = f"{hook.where} ({hook.argv[0]}) for {item.kind} {item.seat or 'fleet'} #{item.seq}"
        environment = dict(os.environ, ST2_EVENT_KIND=item.kind, ST2_EVENT_SEAT=_value(item.seat),
                           ST2_EVENT_FROM=_value(item.from_value), ST2_EVENT_TO=_value(item.to_value),
                           ST2_EVENT_SEQ=_value(item.seq))
        status_read, status_write = os.pipe()
        # The shell's stdout is the status pipe; the hook's own stdout goes nowhere.
        script = '"$0" "$@" >/dev/null; echo $?'
        with tempfile.TemporaryFile() as errors:
            try:
                try:
                    child = subprocess.Popen(["sh", "-c", script, *hook.argv], stdin=subprocess.PIPE,
                                             stdout=status_write, stderr=errors, env=environment,
                                             start_new_session=True)
                finally:
                    os.close(status_write)
            except OSError as error:
                os.close(status_read)
                self.report(f"{label}: cannot run: {error}")
                return None
            with self._lock:
                self._child = child
            try:
                _feed(child, (item.line() + "\n").encode("utf-8"))
                status = _read_status(status_read, hook.timeout_seconds)
                if status is None:
                    self._kill_group(child)
                    self.report(f"{label}: timed out after {hook.timeout_seconds:g}s; killed its process group")
                    return None
            finally:
                os.close(status_read)
                with self._lock:
                    self._child = None
                _collect(child)
            if status != 0:
                errors.seek(0)
                tail = errors.read()[-STDERR_SHOWN:].decode("utf-8", "replace").strip().replace("\n", " | ")
                self.report(f"{label}: failed (exit {status})" + (f": {tail}" if tail else ""))
            return status

    @staticmethod
    def _kill_group(child: subprocess.Popen) -> None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def stop(self) -> None:
        """End the worker; a hook still running is killed with its group (the supervisor's stop
        never waits out a hook's timeout)."""
        with self._lock:
            child = self._child
        if child is not None:
            self._kill_group(child)
        if self._thread is not None:
            try:
                self.queue.put_nowait(_STOP)
            except queue.Full:
                pass
            self._thread.join(timeout=2)
