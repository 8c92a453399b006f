"""Runs over fleet events, rate-limited and bounded: what the ``notify`` hooks
(:mod:`st2.events.notify`) and `st2 web`'s pushes (:mod:`st2.web.push`) share.

A *target* (a hook, a push subscription) has a ``where`` (how its log lines name it) and a
``rate_limit_seconds``. :meth:`Dispatcher.offer` only enqueues (a bounded queue) and one worker
thread runs :meth:`Dispatcher.run`, so the caller — the supervisor's engine, the web server's
event loop — never waits on a target. At most one run per target, seat and kind per its rate
limit; runs held back — suppressed by the rate limit, or dropped because :data:`QUEUE_BOUND`
runs already wait — are counted, and each target, seat and kind's count is one summary line when
its window ends (the rate limit's, or at least :data:`SUMMARY_SECONDS` for drops), so a flapping
seat adds a bounded number of lines, whatever its rate. Durations are ``monotonic`` (a test's
seam), never wall time.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Hashable

from st2.events.event import FleetEvent

QUEUE_BOUND = 256
SUMMARY_SECONDS = 10.0  # the shortest window a summary of held-back runs covers
_STOP = object()
_WAKE = object()


@dataclass
class Tally:
    """Runs of one target, seat and kind held back in one window."""

    target: Any  # has .where and .rate_limit_seconds
    kind: str
    seat: str
    why: str  # "suppressed" or "dropped"
    until: float  # monotonic: when the window ends and the summary is due
    count: int = 0
    first: int | None = None
    last: int | None = None

    def line(self) -> str:
        numbers = f"#{self.first}" if self.first == self.last else f"#{self.first}-#{self.last}"
        because = (f"rate-limit {self.target.rate_limit_seconds:g}s per seat and kind" if self.why == "suppressed"
                   else f"{QUEUE_BOUND} runs already waiting")
        runs = "1 run" if self.count == 1 else f"{self.count} runs"
        return f"{self.target.where}: {self.kind} {self.seat}: {runs} {self.why} ({numbers}; {because})"


class Dispatcher:
    """The queue, the worker and the rate limit. A subclass gives :meth:`report` (one log line)
    and :meth:`run` (one target for one event; its faults are its own to report — an exception
    it lets out is one line, never raised)."""

    thread_name = "st2-dispatch"

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self.last_run: dict[tuple[Hashable, str, str], float] = {}
        self.tallies: dict[tuple[Hashable, str, str, str], Tally] = {}
        self.queue: queue.Queue = queue.Queue(maxsize=QUEUE_BOUND)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopped = False

    def report(self, line: str) -> None:
        raise NotImplementedError

    def run(self, target, item: FleetEvent) -> None:
        raise NotImplementedError

    def offer(self, key: Hashable, target, item: FleetEvent) -> bool:
        """Enqueue one run of ``target`` (``key`` names it in the rate limit) for ``item``, unless
        its rate limit or the full queue holds it back (then it is counted); never blocks."""
        now = self.monotonic()
        limit_key = (key, item.seat or "fleet", item.kind)
        last = self.last_run.get(limit_key)
        if last is not None and now - last < target.rate_limit_seconds:
            self._hold(limit_key, target, item, "suppressed", last + target.rate_limit_seconds)
            return False
        try:
            self.queue.put_nowait((target, item))
        except queue.Full:
            self._hold(limit_key, target, item, "dropped", now + max(target.rate_limit_seconds, SUMMARY_SECONDS))
            return False
        self.last_run[limit_key] = now
        self._ensure_worker()
        return True

    def forget(self) -> None:
        """Report every pending summary and start every rate limit afresh (the targets changed)."""
        self.flush(everything=True)
        self.last_run.clear()

    def _hold(self, limit_key: tuple[Hashable, str, str], target, item: FleetEvent, why: str, until: float) -> None:
        """Count one run held back; its window's summary is due at ``until``."""
        with self._lock:
            tally = self.tallies.get((*limit_key, why))
            fresh = tally is None
            if fresh:
                tally = self.tallies[(*limit_key, why)] = Tally(target, item.kind, limit_key[1], why, until)
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
            self._thread = threading.Thread(target=self._work, name=self.thread_name, daemon=True)
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
            target, item = entry
            try:
                self.run(target, item)
            except Exception as error:  # a target's fault is reported, never raised
                self.report(f"{target.where}: {item.kind} #{item.seq}: {type(error).__name__}: {error}")

    def stop(self) -> None:
        """End the worker (no queued run starts; one running is left to :meth:`interrupt`) and
        report every pending summary."""
        self._stopped = True
        self.interrupt()
        if self._thread is not None:
            try:
                self.queue.put_nowait(_STOP)
            except queue.Full:
                pass
            self._thread.join(timeout=2)
        self.flush(everything=True)

    def interrupt(self) -> None:
        """End the run in progress, if a subclass can (a hook's process group is killed)."""
