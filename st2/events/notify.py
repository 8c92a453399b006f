"""Operator hooks over fleet events: the ``notify`` blocks of ``catalog.kdl``
(:class:`st2.declarations.catalog.NotifyHook`).

For each journaled event whose kind a hook names, the hook's argv runs with the event's JSON
line (:meth:`st2.events.event.FleetEvent.line`, newline-terminated) on stdin and
``ST2_EVENT_KIND``, ``ST2_EVENT_SEAT``, ``ST2_EVENT_FROM``, ``ST2_EVENT_TO``, ``ST2_EVENT_SEQ`` in
its environment, as its own process group (:class:`st2.events.hook_process.HookProcess`), which
st2 kills when the hook ends, past its ``timeout``, or when the supervisor stops or dies — so no
background child a hook leaves outlives it. Never inline in the engine or the reconcile pass:
:meth:`HookRunner.submit` only enqueues (a bounded queue) and one worker thread runs the hooks.

At most one run per hook, seat and kind per ``rate-limit``. Runs held back — suppressed by the
rate limit, or dropped because :data:`QUEUE_BOUND` runs already wait — are counted, and each
hook, seat and kind's count is one summary line when its window ends (the rate limit's, or at
least :data:`SUMMARY_SECONDS` for drops), so a flapping seat adds a bounded number of lines,
whatever its rate. Every failure — cannot start, non-zero exit (with the last of its stderr,
control characters escaped), killed on timeout — is one line. Each line goes to
``<runtime scope>/events/notify.log`` (owner-only, rotated to ``notify.log.1`` past
:data:`LOG_BYTES`: :func:`st2.fs.log.append_line`) and to the supervisor's output; nothing a
hook does can block or fail the supervisor.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable

from st2.catalog.location import CatalogLocation
from st2.catalog.names import shown
from st2.declarations.catalog import NotifyHook, load_catalog_declaration
from st2.events import journal
from st2.events.event import FleetEvent
from st2.events.hook_process import HookProcess
from st2.fs.log import append_line

QUEUE_BOUND = 256
STDERR_SHOWN = 200  # characters of a failed hook's stderr tail that its log line keeps
SUMMARY_SECONDS = 10.0  # the shortest window a summary of held-back runs covers
LOG_BYTES = 1024 * 1024  # notify.log's bound before it becomes notify.log.1
_STOP = object()
_WAKE = object()


def _stamp() -> str:
    now = datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _value(value) -> str:
    return "" if value is None else str(value)


def stderr_words(tail: bytes, total: int) -> str:
    """A failed hook's stderr as one safe line: the last :data:`STDERR_SHOWN` characters of its
    kept tail, lines joined by `` | ``, every control character escaped
    (:func:`st2.catalog.names.shown`), with how much was not shown."""
    text = " | ".join(shown(line) for line in tail.decode("utf-8", "replace").strip().splitlines())
    if len(text) > STDERR_SHOWN or total > len(tail):
        text = f"…{text[-STDERR_SHOWN:]} [{total} bytes of stderr; the last {min(len(text), STDERR_SHOWN)} characters shown]"
    return text


@dataclass
class Tally:
    """Runs of one hook, seat and kind held back in one window."""

    hook: NotifyHook
    kind: str
    seat: str
    why: str  # "suppressed" or "dropped"
    until: float  # monotonic: when the window ends and the summary is due
    count: int = 0
    first: int | None = None
    last: int | None = None

    def line(self) -> str:
        numbers = f"#{self.first}" if self.first == self.last else f"#{self.first}-#{self.last}"
        because = (f"rate-limit {self.hook.rate_limit_seconds:g}s per seat and kind" if self.why == "suppressed"
                   else f"{QUEUE_BOUND} runs already waiting")
        runs = "1 run" if self.count == 1 else f"{self.count} runs"
        return f"{self.hook.where}: {self.kind} {self.seat}: {runs} {self.why} ({numbers}; {because})"


class HookRunner:
    def __init__(self, location: CatalogLocation, scope, *, say: Callable[[str], None] = lambda line: None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.location = location
        self.log_path = str(journal.directory_of(scope) / journal.NOTIFY_LOG)
        self.say = say
        self.monotonic = monotonic
        self.hooks: tuple[NotifyHook, ...] = ()
        self.last_run: dict[tuple[int, str, str], float] = {}
        self.tallies: dict[tuple[int, str, str, str], Tally] = {}
        self.queue: queue.Queue = queue.Queue(maxsize=QUEUE_BOUND)
        self._process: HookProcess | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._refused = False
        self._stopped = False
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
            self.flush(everything=True)
            self.last_run.clear()
        self.hooks = declaration.notify

    def report(self, line: str) -> None:
        append_line(self.log_path, f"{_stamp()} {line}\n", rotate_at=LOG_BYTES)
        self.say(f"notify: {line}")

    def submit(self, events: list[FleetEvent]) -> None:
        """Enqueue the runs ``events`` call for; never blocks."""
        self.flush()
        for item in events:
            for index, hook in enumerate(self.hooks):
                if item.kind not in hook.kinds:
                    continue
                now = self.monotonic()
                seat = item.seat or "fleet"
                limit_key = (index, seat, item.kind)
                last = self.last_run.get(limit_key)
                if last is not None and now - last < hook.rate_limit_seconds:
                    self._hold(limit_key, hook, item, "suppressed", last + hook.rate_limit_seconds)
                    continue
                try:
                    self.queue.put_nowait((hook, item))
                except queue.Full:
                    self._hold(limit_key, hook, item, "dropped", now + max(hook.rate_limit_seconds, SUMMARY_SECONDS))
                    continue
                self.last_run[limit_key] = now
                self._ensure_worker()

    def _hold(self, limit_key: tuple[int, str, str], hook: NotifyHook, item: FleetEvent, why: str,
              until: float) -> None:
        """Count one run held back; its window's summary is due at ``until``."""
        with self._lock:
            tally = self.tallies.get((*limit_key, why))
            if tally is None:
                tally = self.tallies[(*limit_key, why)] = Tally(hook, item.kind, limit_key[1], why, until)
                fresh = True
            else:
                fresh = False
            tally.count += 1
            tally.first = item.seq if tally.first is None else tally.first
            tally.last = item.seq
        if fresh:
            self._ensure_worker()
            try:
                self.queue.put_nowait(_WAKE)  # the worker's wait now ends at this window's end
            except queue.Full:
                pass  # the worker is busy and will look again after its run

    def flush(self, everything: bool = False) -> None:
        """Report the summary of every window that has ended (every window, when ``everything``)."""
        now = self.monotonic()
        with self._lock:
            due = [key for key, tally in self.tallies.items() if everything or tally.until <= now]
            lines = [self.tallies.pop(key).line() for key in sorted(due, key=lambda key: self.tallies[key].until)]
        for line in lines:
            self.report(line)

    def _next_due(self) -> float | None:
        with self._lock:
            if not self.tallies:
                return None
            return max(0.0, min(tally.until for tally in self.tallies.values()) - self.monotonic())

    def _ensure_worker(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="st2-notify", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            try:
                entry = self.queue.get(timeout=self._next_due())
            except queue.Empty:
                entry = _WAKE
            self.flush()
            if entry is _WAKE:
                continue
            if entry is _STOP or self._stopped:
                return
            hook, item = entry
            try:
                self.run(hook, item)
            except Exception as error:  # a hook's fault is reported, never raised
                self.report(f"{hook.where}: {item.kind} #{item.seq}: {type(error).__name__}: {error}")

    def run(self, hook: NotifyHook, item: FleetEvent) -> int | None:
        """Run one hook for one event; its exit status, None when it was killed or gave none.
        Its process group is killed as soon as it ends, whatever it left running."""
        label = f"{hook.where} ({shown(hook.argv[0])}) for {item.kind} {item.seat or 'fleet'} #{item.seq}"
        environment = dict(os.environ, ST2_EVENT_KIND=item.kind, ST2_EVENT_SEAT=_value(item.seat),
                           ST2_EVENT_FROM=_value(item.from_value), ST2_EVENT_TO=_value(item.to_value),
                           ST2_EVENT_SEQ=_value(item.seq))
        process = HookProcess(hook.argv, environment)
        try:
            process.start((item.line() + "\n").encode("utf-8"))
        except OSError as error:
            self.report(f"{label}: cannot run: {error}")
            return None
        with self._lock:
            self._process = process
        try:
            status = process.wait(hook.timeout_seconds)
        finally:
            with self._lock:
                self._process = None
            process.finish()
        if status is None:
            self.report(f"{label}: timed out after {hook.timeout_seconds:g}s; killed its process group")
        elif status != 0:
            words = stderr_words(process.stderr_tail, process.stderr_bytes)
            self.report(f"{label}: failed (exit {status})" + (f": {words}" if words else ""))
        return status

    def stop(self) -> None:
        """End the worker; a hook still running is killed with its group (the supervisor's stop
        never waits out a hook's timeout) and no queued run starts. Every pending summary is
        reported."""
        self._stopped = True
        with self._lock:
            process = self._process
        if process is not None:
            process.kill()
        if self._thread is not None:
            try:
                self.queue.put_nowait(_STOP)
            except queue.Full:
                pass
            self._thread.join(timeout=2)
        self.flush(everything=True)
