"""The supervisor's fleet event engine: watch the records, diff successive projections, journal
the transitions, hand them to the operator's hooks.

It runs in its own thread inside ``st2 up`` (started after the first reconcile pass, stopped
with the loop), with its own mutation-only inotify watch (:class:`st2.fs.watch.MutationWatch`)
over every seat directory of the catalog, the ``agents/<host>`` directories, this host's park
markers and the usage snapshot's directory, so the reconcile pass neither waits for it nor
re-reads anything for it. A wake-up re-projects only the seats whose ``harness-state``,
``harness-context`` or ``driver-diagnostic`` changed — through :class:`.projection.FleetProjection`,
i.e. the roster's own :func:`st2.roster.build.seat_row` — and diffs each against its previous
facets (:func:`st2.events.facets.diff`). Time alone changes some projections: a seat is also
re-read at the instant its records go stale by age (:func:`st2.events.facets.stale_deadline_ms`)
and when its PTY session's launch record changes (a session that died reads ``session-dead``);
the supervisor's interval re-judges the usage verdict and the parks; every
:data:`FULL_PASS_SECONDS` the whole fleet is re-read as a backstop. Without inotify the interval
re-reads everything. Every transition is appended to the
journal (:mod:`st2.events.journal`) before it reaches a hook; the projection is published at
most every :data:`STATE_SAVE_SECONDS` (and at every rotation and stop), and a restart replays
the journal past it, so a SIGKILL between the two loses and repeats nothing.
Each facet key journals at most :data:`st2.events.flap.BUDGET` transitions per
:data:`st2.events.flap.WINDOW_SECONDS`: past that its transitions are held (said once per
window) and its net change is journaled when the window ends, so a flapping seat cannot roll the
other seats' events off the journal; meanwhile that seat is re-read at most every
:data:`HELD_READ_SECONDS`, not at every write.
A journal the writer refuses (a FIFO, a symlink or a directory in place of the current
segment: :class:`st2.events.journal.JournalRefused`) holds the projection: the refusal is said
once, nothing reaches a hook, and the whole fleet is re-read each interval until the journal
takes the held transitions.
"""

from __future__ import annotations

import os
import selectors
import threading
import time
from pathlib import Path
from typing import Callable

from st2.catalog.layout import AGENTS_DIR, CATALOG_DECLARATION, DRIVER_DIAGNOSTIC, HARNESS_CONTEXT, HARNESS_STATE
from st2.catalog.location import CatalogLocation
from st2.events import facets, flap, journal
from st2.events.event import FleetEvent
from st2.events.projection import FleetProjection
from st2.fs.watch import IGNORED, MutationWatch
from st2.runtime import launch_record
from st2.runtime.scope import RuntimeScope
from st2.runtime.session_probe import SessionProbe

STATE_SAVE_SECONDS = 1.0
FULL_PASS_SECONDS = 600.0  # the backstop re-reading of every seat (with a watch)
RECORD_NAMES = frozenset((HARNESS_STATE, HARNESS_CONTEXT, DRIVER_DIAGNOSTIC))
CATALOG_ROLE = "#catalog"
ROOT_ROLE = "#root"
PARKS_ROLE = "#parks"
TASKS_ROLE = "#tasks"
SCOPE_ROLE = "#scope"
USAGE_ROLE = "#usage"
ERROR_BACKOFF_SECONDS = 5.0
HELD_READ_SECONDS = 1.0  # how often a seat with a held key is re-read at most (st2.events.flap)


def values_of(groups: dict[str, dict[str, facets.Facet]]) -> dict[str, dict[str, object]]:
    return {name: {key: facet.value for key, facet in group.items()} for name, group in groups.items()}


class EventEngine:
    def __init__(self, location: CatalogLocation, scope: RuntimeScope, park_reader, *, interval: float = 30.0,
                 wall_ms: Callable[[], int] | None = None, say: Callable[[str], None] = lambda line: None,
                 on_events: Callable[[list[FleetEvent]], None] | None = None,
                 on_catalog: Callable[[], None] | None = None, environ=None,
                 budget: flap.FlapBudget | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.location = location
        self.scope = scope
        self.interval = interval
        self.wall_ms = wall_ms or (lambda: time.time_ns() // 1_000_000)
        self.say = say
        self.on_events = on_events
        self.on_catalog = on_catalog
        self.projection = FleetProjection(location, scope, park_reader, environ)
        self.hooks = None  # a HookRunner (st2.events.notify), stopped with the engine
        self.writer = journal.JournalWriter(journal.directory_of(scope), scope.publish)
        self.budget = budget or flap.FlapBudget()
        self.clock = clock    # the flap budget's time (monotonic seconds): its windows open and end by it
        self._deferred: set[str] = set()  # held seats whose re-read waits for _next_held_read
        self._next_held_read = 0.0
        self.values: dict[str, dict[str, object]] = {}
        self.watch = MutationWatch()
        self._stop_read, self._stop_write = os.pipe()
        self._thread: threading.Thread | None = None
        self._dirty = False
        self._saved_at = 0.0
        self.refused: str | None = None  # the journal's refusal while it holds the projection
        self.journaled = 0
        self.full_passes = 0

    # --- lifecycle ------------------------------------------------------------------------------

    def start(self) -> "EventEngine":
        self._thread = threading.Thread(target=self._run, name="st2-events", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        try:
            os.write(self._stop_write, b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._save(force=True)
        if self.hooks is not None:
            self.hooks.stop()
        for descriptor in (self._stop_read, self._stop_write):
            try:
                os.close(descriptor)
            except OSError:
                pass

    def resume(self) -> None:
        """Resume the journal and diff the current records against the persisted projection
        (the first start ever takes the current records as its baseline: no history invented)."""
        resumed = self.writer.resume()
        if resumed.refused_state is not None:
            self.say(f"events: {resumed.refused_state}; not continued from: the current records are the new "
                     f"baseline after #{resumed.seq}")
        self.projection.rediscover()
        self.projection.usage(self.wall_ms())   # learns the usage snapshot's path for the watch
        self._sync_watches()                      # before the projection: no write falls between
        groups = self.projection.everything(self.wall_ms())
        if resumed.groups is None:
            self.values = values_of(groups)
            self._dirty = True
        else:
            self.values = resumed.groups
            self._apply(groups, replace_all=True)
        self._save(force=True)
        self._sync_watches()
        if resumed.replayed:
            self.say(f"events: journal resumed at #{resumed.seq} ({resumed.replayed} line(s) past the saved projection replayed)")

    # --- one step -------------------------------------------------------------------------------

    def _apply(self, groups: dict[str, dict[str, facets.Facet]], *, replace_all: bool = False) -> list[FleetEvent]:
        """Diff ``groups`` against the projection, journal the transitions, then take the new
        values and hand the numbered events on. A refused journal (:class:`journal.JournalRefused`)
        holds everything: the projection keeps its old values (so a later pass finds the same
        transitions), nothing is handed to a hook, the refusal is said once until it clears."""
        now_ms = self.wall_ms()
        found: list[FleetEvent] = []
        updates: dict[str, dict[str, object] | None] = {}  # group -> new values (None: forget it)
        names = set(groups) | (set(self.values) if replace_all else set())
        for name in sorted(names):
            current = groups.get(name)
            if current is None:
                # A seat no longer declared: forget it without claiming transitions for it.
                if name.startswith(facets.SEAT_GROUP_PREFIX):
                    updates[name] = None
                    continue
                current = {}
            found += facets.diff(self.values.get(name, {}), current, now_ms)
            new_values = {key: facet.value for key, facet in current.items()}
            if new_values != self.values.get(name):
                updates[name] = new_values
        numbered: list[FleetEvent] = []
        held: list[FleetEvent] = []
        if found:
            found, held = self._within_budget(found, updates)
        if found:
            size_before = self._journal_size()
            try:
                numbered = self.writer.append(found)
            except journal.JournalRefused as error:
                self.budget.refund(found + held)  # nothing journaled: a later pass tries them again
                if self.refused != str(error):
                    self.say(f"events: {error}")
                self.refused = str(error)
                return []
            if self.refused is not None:
                self.say(f"events: the event journal is a regular file again; journaling resumed at #{numbered[0].seq}")
                self.refused = None
            self.journaled += len(numbered)
        for name, new_values in updates.items():
            if new_values is None:
                self.values.pop(name, None)
            else:
                self.values[name] = new_values
            self._dirty = True
        if numbered:
            if self._journal_size() < size_before:
                self._save(force=True)  # rotated: the replay must never need the dropped segment
            if self.on_events is not None:
                self.on_events(numbered)
        return numbered

    def _within_budget(self, found: list[FleetEvent],
                       updates: dict[str, dict[str, object] | None]) -> tuple[list[FleetEvent], list[FleetEvent]]:
        """``(journaled, held)``: the transitions within their key's budget (:mod:`st2.events.flap`),
        and the others. A held one leaves its key's journaled value in ``updates``, so the re-read
        at its window's end diffs from it and journals the net change; the first held in a window
        is said, once."""
        admitted, held, began = self.budget.admit(found, self.clock())
        for item in held:
            group, name = facets.group_of(item.kind, item.seat), flap.key_of(item)
            values, previous = updates.get(group), self.values.get(group, {})
            if values is not None:
                if name in previous:
                    values[name] = previous[name]
                else:
                    values.pop(name, None)
        for name in began:
            kind, seat, subject = facets.split_key(name)
            self.say(f"events: {seat or 'fleet'} {kind}{f' ({subject})' if subject else ''} changed "
                     f"{self.budget.budget} times within {self.budget.window_seconds:g}s; its further changes are held "
                     "and its net change is journaled when that window ends")
        return admitted, held

    def _released(self) -> tuple[set[str], bool, bool]:
        """The groups to re-read because a held window ended: ``(seats, parks, usage)``."""
        seats: set[str] = set()
        parks = usage = False
        for name in self.budget.release(self.clock()):
            kind, seat, _ = facets.split_key(name)
            group = facets.group_of(kind, seat)
            if group == facets.PARKS_GROUP:
                parks = True
            elif group == facets.USAGE_GROUP:
                usage = True
            else:
                seats.add(group[len(facets.SEAT_GROUP_PREFIX):])
        return seats, parks, usage

    def _paced(self, seats: set[str], now: float) -> set[str]:
        """``seats`` to re-read now: a seat with a held key is re-read at most every
        :data:`HELD_READ_SECONDS` (its writes in between are taken by the next read), so a seat
        flapping at hundreds of writes a second costs one projection a second, not one a write."""
        held = (seats | self._deferred) & self.budget.held_seats()
        if not held:
            self._deferred.clear()
            return seats
        if now < self._next_held_read:
            self._deferred |= held
            return seats - held
        self._next_held_read = now + HELD_READ_SECONDS
        self._deferred.clear()
        return seats | held

    def _journal_size(self) -> int:
        try:
            return os.stat(self.writer.directory / journal.CURRENT).st_size
        except FileNotFoundError:
            return 0

    def _save(self, force: bool = False) -> None:
        if not self._dirty:
            return
        if not force and time.monotonic() - self._saved_at < STATE_SAVE_SECONDS:
            return
        self.writer.save_state(self.values)
        self._dirty = False
        self._saved_at = time.monotonic()

    def full_pass(self) -> list[FleetEvent]:
        groups = self.projection.everything(self.wall_ms())
        self._sync_watches()
        return self._apply(groups, replace_all=True)

    def partial_pass(self, seats: set[str], parks: bool, usage: bool) -> list[FleetEvent]:
        now_ms = self.wall_ms()
        groups: dict[str, dict[str, facets.Facet]] = {}
        probe = SessionProbe(str(self.location.root), self.location.host)
        if usage:   # a seat on an account: its budget hold follows the account's snapshot
            seats = set(seats) | (self.projection.accounted & set(self.projection.seats))
        for runtime_id in sorted(seats):
            seat_facets = self.projection.seat(runtime_id, now_ms, probe)
            if seat_facets is not None:
                groups[facets.seat_group(runtime_id)] = seat_facets
        if parks:
            groups[facets.PARKS_GROUP] = self.projection.parks()
        if usage:
            groups[facets.USAGE_GROUP] = self.projection.usage(now_ms)
        return self._apply(groups)

    # --- watching -------------------------------------------------------------------------------

    def _sync_watches(self) -> None:
        if not self.watch.active:
            return
        root = self.location.root
        wanted: dict[Path, str] = {root: ROOT_ROLE, root / AGENTS_DIR: CATALOG_ROLE, self.scope.parks: PARKS_ROLE,
                                   self.scope.tasks: TASKS_ROLE, self.scope.directory: SCOPE_ROLE,
                                   self._tombstones(): TASKS_ROLE}
        try:
            for host_directory in (root / AGENTS_DIR).iterdir():
                if host_directory.is_dir() and not host_directory.name.startswith("."):
                    wanted[host_directory] = CATALOG_ROLE
        except OSError:
            pass
        for runtime_id, directory in self.projection.seat_directories().items():
            wanted[directory] = runtime_id
        for usage_file in [self.projection.usage_file] + list(getattr(self.projection, "account_usage_files", [])):
            if usage_file:
                wanted[Path(os.path.dirname(os.path.abspath(usage_file)))] = USAGE_ROLE
        for path, role in wanted.items():
            if not self.watch.watching(path) and path.is_dir():
                self.watch.add(path, role)
        for path in [path for path in self.watch.by_path if path not in wanted]:
            self.watch.remove(path)

    def _tombstones(self) -> Path:
        """Where st2 marks a stopped task's session dead (``st2.runtime.launch_record.tombstone``)."""
        return launch_record.tombstone(self.scope, "-").parent

    def _drain(self) -> tuple[set[str], bool, bool, bool, bool]:
        seats: set[str] = set()
        parks = usage = catalog = declaration = False
        usage_name = os.path.basename(self.projection.usage_file or "")
        for role, name, mask in self.watch.events():
            if mask & IGNORED:
                catalog = True
            elif role == CATALOG_ROLE:
                catalog = catalog or not name.startswith(".")
            elif role == ROOT_ROLE:
                declaration = declaration or name == CATALOG_DECLARATION
                catalog = catalog or name == AGENTS_DIR
            elif role == PARKS_ROLE:
                parks = parks or (name.endswith(".json") and not name.startswith("."))
            elif role == USAGE_ROLE:
                usage = usage or name == usage_name
            elif role == TASKS_ROLE:
                # A seat's PTY session was (re)launched or stopped (its launch record or its
                # tombstone): its harness-state may now read session-dead, or alive again, with
                # no record written.
                task = name[: -len(".json")] if name.endswith(".json") else name
                if task in self.projection.seats:
                    seats.add(task)
            elif role == SCOPE_ROLE and name == self._tombstones().name:
                self._sync_watches()  # the first tombstone's directory appeared: watch it too
                try:
                    seats |= set(os.listdir(self._tombstones())) & set(self.projection.seats)
                except OSError:
                    pass
            elif name in RECORD_NAMES:
                seats.add(role)
        return seats, parks, usage, catalog, declaration

    def _run(self) -> None:
        try:
            self.resume()
        except Exception as error:
            self.say(f"events: cannot start the event journal: {type(error).__name__}: {error}")
            return
        selector = selectors.DefaultSelector()
        selector.register(self._stop_read, selectors.EVENT_READ)
        if self.watch.active:
            selector.register(self.watch.fileno(), selectors.EVENT_READ)
        else:
            self.say(f"events: filesystem watch unavailable ({self.watch.error}); re-reading every {self.interval:g}s")
        # Without a watch the timer is all there is: everything at every interval. With one, the
        # interval re-judges only the usage verdict and the parks, a seat is re-read when its
        # records or its session's launch record change or when they go stale by age, and the
        # whole fleet is re-read every FULL_PASS_SECONDS as a backstop.
        full_every = self.interval if not self.watch.active else max(self.interval, FULL_PASS_SECONDS)
        next_full = time.monotonic() + full_every
        next_tick = time.monotonic() + self.interval
        try:
            while True:
                now = time.monotonic()
                timeout = max(0.0, min(next_full, next_tick) - now)
                deadline = self.projection.next_deadline_ms()
                if deadline is not None:
                    timeout = min(timeout, max(0.0, (deadline - self.wall_ms() + 1) / 1000))
                if self._dirty:
                    timeout = min(timeout, STATE_SAVE_SECONDS)
                release = self.budget.next_release()
                if release is not None:
                    timeout = min(timeout, max(0.0, release - self.clock()))
                if self._deferred:
                    timeout = min(timeout, max(0.0, self._next_held_read - now))
                ready = {key.fd for key, _ in selector.select(timeout)}
                if self._stop_read in ready:
                    return
                try:
                    seats, parks, usage, catalog, declaration = self._drain()
                    released_seats, released_parks, released_usage = self._released()
                    seats |= released_seats
                    parks, usage = parks or released_parks, usage or released_usage
                    if declaration and self.on_catalog is not None:
                        self.on_catalog()
                    now = time.monotonic()
                    if now >= next_full or catalog or (self.refused is not None and now >= next_tick):
                        # (a held projection is re-read whole each interval: its transitions
                        # are journaled as soon as the journal takes them)
                        self.full_pass()
                        self.full_passes += 1
                        next_full = time.monotonic() + full_every
                        next_tick = time.monotonic() + self.interval
                    else:
                        if now >= next_tick:
                            parks = usage = True
                            next_tick = now + self.interval
                        seats |= self.projection.due(self.wall_ms())
                        seats = self._paced(seats, now)
                        if seats or parks or usage:
                            self.partial_pass(seats, parks, usage)
                    self._save()
                except Exception as error:  # the supervisor must outlive any fault here
                    self.say(f"events: {type(error).__name__}: {error}; retrying in {ERROR_BACKOFF_SECONDS:g}s")
                    if self._stop_read in {key.fd for key, _ in selector.select(ERROR_BACKOFF_SECONDS)}:
                        return
        finally:
            selector.close()
