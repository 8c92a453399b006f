"""The supervisor loop: ``st2 up``.

One process per catalog and host, enforced by the lock file ``<catalog>/.st2.<host>.lock``.
Passes are serialized; between them the loop sleeps until the earliest of the interval timer, a
restart deadline, a mutation wake-up from :mod:`st2.supervisor.watch`, the exit of a task it
started, or a stop request. Signal handlers only enqueue; the loop acts. A normal stop ends the
loop and leaves every task running: only ``st2 down`` (or a non-running desired state) kills.
"""

from __future__ import annotations

import collections
import os
import selectors
import signal
import sys
from typing import TextIO


from st2.catalog.location import CatalogLocation
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.fs.lock import LockTimeout, RecordLock
from st2.fs.pipe import drain
from st2.declarations.model import RETIRED
from st2.supervisor import holds, supervisor_record
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.exit_watch import ExitWatch
from st2.supervisor.reconcile import Reconciler, Selection
from st2.runtime.scope import RuntimeScope
from st2.supervisor.watch import CatalogWatch

STOP = "stop"
CHILD = "child"


class Notifier:
    """sd_notify through :mod:`sdnotify`; a no-op without ``NOTIFY_SOCKET``."""

    def __init__(self) -> None:
        self.enabled = bool(os.environ.get("NOTIFY_SOCKET"))
        self.notifier = None
        if self.enabled:
            import sdnotify

            self.notifier = sdnotify.SystemdNotifier()
        watchdog = os.environ.get("WATCHDOG_USEC")
        self.watchdog_seconds = int(watchdog) / 1_000_000 if watchdog and watchdog.isdigit() else None

    def send(self, message: str) -> None:
        if self.notifier is not None:
            self.notifier.notify(message)


def run(location: CatalogLocation, *, once: bool = False, interval: float = 30.0,
        selection: Selection = Selection(), materialize_only: bool = False,
        clock: Clock = SYSTEM_CLOCK, output: TextIO | None = None, archive_clock: Clock | None = None) -> int:
    output = output or sys.stderr
    if not location.root.is_dir():
        print(f"st2 up: catalog {location.root} does not exist", file=output)
        return 2
    lock_path = location.paths.supervisor_lock(location.host)
    lock = RecordLock(lock_path, timeout=0)
    try:
        lock.acquire()
    except LockTimeout:
        print(f"st2 up: another supervisor holds {lock_path}; one per catalog and host", file=output)
        return 1
    try:
        return _supervise(location, once, interval, selection, materialize_only, clock, output,
                          archive_clock or clock)
    finally:
        lock.release()


def up(location: CatalogLocation, *, once: bool, interval: float, agent: str | None, task: str | None,
       materialize_only: bool, resume: bool) -> int:
    """``st2 up``: first, with ``resume``, ask that the seats ``st2 down`` stopped resume their
    recorded sessions (:func:`st2.supervisor.resume_request.resume_stopped`); then :func:`run`
    for the selected seat or task (at most one of ``agent`` and ``task``), the archive step's
    grace period read from the command clock (which ``ST2_CLOCK_WALL_MS`` pins for the process
    tests: seven days are not slept out). Returns the verb's exit status."""
    from st2.base.clock import command_clock

    if resume:
        from st2.supervisor.resume_request import resume_stopped

        resume_stopped(location, agent=agent, task=task)
    return run(location, once=once, interval=interval, selection=Selection(agent=agent, task=task),
               materialize_only=materialize_only, archive_clock=command_clock())


def _supervise(location, once, interval, selection, materialize_only, clock, output, archive_clock) -> int:
    scope = RuntimeScope(location.root, location.host)
    scope.ensure()
    if once:
        # A one-shot pass on a filesystem that takes no write would launch companions that die
        # at once and still report success: refuse it (the OSError is the CLI's one line).
        from st2.fs.atomic import ensure_directory
        from st2.fs.probe import probe_writable

        probe_writable(ensure_directory(location.paths.control))
        probe_writable(scope.directory)
    identity = supervisor_record.own_identity()
    supervisor_record.write(scope, identity, clock.wall_ms())
    holds.clear_all(scope)
    reconciler = Reconciler(location, clock=clock, scope=scope, output=output)
    notifier = Notifier()
    queue: collections.deque[str] = collections.deque()
    reconciler.interrupted = lambda: STOP in queue   # a stop ends a pass's admission drain early
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    os.set_blocking(write_end, False)
    previous = {}
    if not once:
        def enqueue_stop(number, frame):
            queue.append(STOP)

        def enqueue_child(number, frame):
            queue.append(CHILD)

        for number, handler in ((signal.SIGTERM, enqueue_stop), (signal.SIGINT, enqueue_stop),
                                (signal.SIGCHLD, enqueue_child)):
            previous[number] = signal.signal(number, handler)
        previous_wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    watch = CatalogWatch(location, scope) if not once else None
    exits = ExitWatch()
    if not once:
        # Which build supervises matters after a binary replacement (R11): say it once.
        import st2

        reconciler.say(f"supervising {location.root} on {location.host} as pid {identity.pid} "
                       f"(st2 {st2.__version__} from {os.path.dirname(os.path.abspath(st2.__file__))})")
    if watch is not None and watch.error:
        reconciler.say(watch.error)
    events = None
    schedules = None
    resync = None
    resources = None
    try:
        ready_sent = False
        archive_held = False  # said once when archival starts waiting for catalog.kdl
        while True:
            if STOP in queue:
                notifier.send("STOPPING=1")
                reconciler.say("stopping; every task keeps running")
                return 0
            # Child exits that arrived before this pass are observed by it; only a stop survives.
            queue.clear()
            drain(read_end)
            if watch is not None:
                watch.sync()
                watch.drain()
            view = read_catalog(location)
            report = reconciler.run_pass(view, selection, materialize_only)
            if selection.everything and not materialize_only:
                # A catalog.kdl that does not validate reads as the default declaration: archival
                # would run on the default archive-after in place of the declared one (even "0").
                if not view.catalog_errors:
                    _archive_step(location, scope, archive_clock, reconciler,
                                  {plan.identity for plan in view.plans if plan.desired_state == RETIRED})
                elif not archive_held:
                    reconciler.say("archive step held until catalog.kdl validates")
                archive_held = bool(view.catalog_errors)
            status = report.summary()
            notifier.send(f"STATUS={status}")
            if not ready_sent:
                notifier.send("READY=1")
                ready_sent = True
            if once or materialize_only:
                return 1 if report.errors else 0
            if events is None and selection.everything:
                events = _start_events(location, scope, interval, clock, reconciler)
            if selection.everything:
                schedules = _hand_schedules(schedules, location, scope, view, clock, reconciler)
                resync = _hand_resync(resync, location, view, clock, reconciler)
                resources = _observe_resources(resources, view, location, scope, clock, reconciler)
            if watch is not None:
                watch.sync()
            if exits.track(report.running_identities):
                continue                            # a task exited right after the pass saw it
            if _wait(reconciler, watch, queue, read_end, interval, report.next_deadline, clock, notifier, exits):
                notifier.send("STOPPING=1")
                reconciler.say("stopping; every task keeps running")
                return 0
    finally:
        if events is not None:
            events.stop()
        if schedules is not None:
            schedules.stop()
        if resync is not None:
            resync.stop()
        if resources is not None:
            resources.stop()
        exits.close()
        if not once:
            signal.set_wakeup_fd(previous_wakeup)
            for number, handler in previous.items():
                signal.signal(number, handler)
        os.close(read_end)
        os.close(write_end)


def _start_events(location: CatalogLocation, scope: RuntimeScope, interval: float, clock: Clock,
                  reconciler: Reconciler):
    """The fleet event engine (:mod:`st2.events.engine`), in its own thread after the first
    pass (so the park markers it reads are this supervisor's), with the catalog's notify hooks."""
    from st2.events.engine import EventEngine
    from st2.events.notify import HookRunner
    from st2.supervisor.park import believed

    hooks = HookRunner(location, scope, say=reconciler.say)
    engine = EventEngine(location, scope, believed, interval=interval, wall_ms=clock.wall_ms, say=reconciler.say,
                         on_events=hooks.submit, on_catalog=hooks.reload)
    engine.hooks = hooks
    return engine.start()


def _hand_schedules(runner, location: CatalogLocation, scope: RuntimeScope, view, clock: Clock,
                    reconciler: Reconciler):
    """Hand this pass's seats to the schedule thread (:mod:`st2.schedule.runner`), started on
    the first pass that finds a schedule; it posts outside the pass."""
    from st2.schedule.runner import ScheduleRunner, armed_from_plans

    armed = armed_from_plans(view.plans)
    if runner is None:
        if not armed:
            return None
        from st2.runtime.resumable_session import SessionStore

        runner = ScheduleRunner(location.root, SessionStore.beside(scope.directory), clock=clock,
                                say=reconciler.say).start()
    runner.update(armed)
    return runner


def _hand_resync(publisher, location: CatalogLocation, view, clock: Clock, reconciler: Reconciler):
    """Hand this pass's subscriptions to the resync publisher (:mod:`st2.resync.publisher`),
    started on the first pass that finds one. Only tables are swapped: the pass never waits for
    a publication."""
    from st2.resync.publisher import ResyncPublisher, entries_from_plans

    entries = entries_from_plans(view.plans)
    if publisher is None:
        if not entries:
            return None
        publisher = ResyncPublisher(location.root, location.host, clock=clock, say=reconciler.say).start()
    publisher.refresh(entries)
    return publisher


def _observe_resources(resources, view, location: CatalogLocation, scope: RuntimeScope, clock: Clock,
                       reconciler: Reconciler):
    """Hand this pass's bindings to the resource host (:mod:`st2.supervisor.resources`), starting
    its thread after the first pass, once the provider runtimes were launched."""
    from st2.supervisor import resources as observation

    if resources is None:
        resources = observation.start(scope.directory, clock.wall_ms, reconciler.say)
    resources.configure(observation.watched(view, lambda host, identity: location.paths.seat(host, identity).directory))
    return resources


def _archive_step(location: CatalogLocation, scope: RuntimeScope, clock: Clock, reconciler: Reconciler,
                  retired: set[str]) -> None:
    """Archive the seats retired past ``archive-after`` (skipped, never waited for, when an author
    holds the catalog authoring lock)."""
    from st2.authoring.auto_archive import archive_step
    from st2.runtime import launch_record

    for line in archive_step(location, clock.wall_ms(), lambda: launch_record.recorded_ids(scope),
                             retired_hint=retired).lines():
        reconciler.say(line)


def _wait(reconciler: Reconciler, watch, queue, read_end: int, interval: float,
          next_deadline: float | None, clock: Clock, notifier: Notifier,
          exits: ExitWatch | None = None) -> bool:
    """Sleep until the next pass is due. Return True when a stop was requested."""
    deadline = clock.monotonic() + interval
    if next_deadline is not None:
        deadline = min(deadline, next_deadline)
    selector = selectors.DefaultSelector()
    try:
        selector.register(read_end, selectors.EVENT_READ)
        for descriptor in (watch.descriptors() if watch is not None else ()):
            selector.register(descriptor, selectors.EVENT_READ)
        for descriptor in (exits.descriptors() if exits is not None else ()):
            selector.register(descriptor, selectors.EVENT_READ)
        return _wait_on(selector, reconciler, watch, queue, read_end, deadline, clock, notifier)
    finally:
        selector.close()


def _wait_on(selector, reconciler, watch, queue, read_end, deadline, clock, notifier) -> bool:
    watch_descriptors = set(watch.descriptors()) if watch is not None else set()
    while True:
        if STOP in queue:
            return True
        if _task_exited(reconciler):
            return False
        remaining = deadline - clock.monotonic()
        if remaining <= 0:
            return False
        if notifier.watchdog_seconds:
            remaining = min(remaining, notifier.watchdog_seconds / 2)
        ready = {key.fd for key, _ in selector.select(remaining)}
        if read_end in ready:
            drain(read_end)
            ready.discard(read_end)
        relevant = False
        if ready & watch_descriptors:
            ready -= watch_descriptors
            relevant = watch.drain()
        # Sent after the drain, so every filesystem event before a WATCHDOG=1 has been read: one
        # that arrives after it wakes the loop again (and sends another). Sent before the drain,
        # a write landing between the two was read silently, with no wake-up of its own.
        notifier.send("WATCHDOG=1")
        if relevant:
            return STOP in queue
        if ready:                                   # a task's pidfd: it exited
            return STOP in queue
        queue_copy = list(queue)
        queue.clear()
        if STOP in queue_copy:
            return True


def _task_exited(reconciler: Reconciler) -> bool:
    """Reap exited children; True when one of them was a task (an exec task's exit must not
    wait for the interval)."""
    reaped = reconciler.reap()
    return bool(reaped & reconciler.launched_pids)
