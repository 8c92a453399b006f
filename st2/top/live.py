"""The fleet as both faces keep it live (`st2 top` and `st2 web`): the :class:`~st2.top.model.Fleet`,
the usage header's reading and the recent fleet events, kept current by one
:class:`~st2.top.refresh.FleetWatch` over the seats, the catalog, this host's scope, the usage
files and the event journal.

A face registers :meth:`LiveFleet.fileno` with its event loop, calls :meth:`LiveFleet.drain` when
it is readable (cheap: it only collects what changed), and :meth:`LiveFleet.apply` when it chooses
to re-read (each face paces that itself). ``apply`` re-reads only what changed and returns what
it re-read. Without inotify :attr:`LiveFleet.watching` is False and the face re-reads everything
on a timer (:meth:`LiveFleet.everything`)."""

from __future__ import annotations

from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.catalog.layout import AGENTS_DIR
from st2.catalog.location import CatalogLocation
from st2.runtime.scope import RuntimeScope
from st2.top.events_view import RECENT, RecentEvents
from st2.top.model import Fleet
from st2.top.refresh import Changes, FleetWatch
from st2.top.usage_view import UsageView, read_usage


class LiveFleet:
    """``recent``: how many fleet events to keep (the newest)."""

    def __init__(self, location: CatalogLocation, *, clock: Clock = SYSTEM_CLOCK, environ=None, inventory_reader=None,
                 cache=None, recent: int = RECENT) -> None:
        self.location = location
        self.clock = clock
        self.environ = environ
        self.fleet = Fleet(location, inventory_reader, cache)
        self.events = RecentEvents(location, recent)
        self.usage = UsageView("", "STALE")
        self.watch: FleetWatch | None = None
        self.pending = Changes()

    def load(self) -> None:
        """Read everything once."""
        now_ms = self.clock.wall_ms()
        self.fleet.load(now_ms)
        self.usage = read_usage(self.environ, now_ms // 1000, self.location.root)
        self.events.load()

    def start_watch(self) -> bool:
        """Open the watch over everything read; False when inotify is unavailable."""
        watch = FleetWatch()
        if not watch.active:
            return False
        self.watch = watch
        self._watch_everything()
        return True

    @property
    def watching(self) -> bool:
        return self.watch is not None

    def fileno(self) -> int:
        return self.watch.fileno()

    def close(self) -> None:
        if self.watch is not None:
            self.watch.watch.close()
            self.watch = None

    def drain(self) -> bool:
        """Collect the watch's pending events; True when something is now waiting to be re-read."""
        changes = self.watch.drain() if self.watch is not None else Changes()
        self.pending.merge(changes)
        return bool(changes)

    def everything(self) -> None:
        """Mark everything to be re-read (the timer's refresh without inotify)."""
        self.pending.merge(Changes(seats=set(self.fleet.discovered), catalog=True, tasks=True, usage=True,
                                   events=True, asks=set(self.fleet.discovered)))

    def apply(self) -> Changes:
        """Re-read what is waiting and return it (seats, catalog, tasks, usage, events; ``asks``
        names the seats whose open ask changed, which nothing here reads)."""
        changes, self.pending = self.pending, Changes()
        now_ms = self.clock.wall_ms()
        if changes.catalog:
            self.fleet.load(now_ms)
            if self.watch is not None:
                self._watch_everything()
        else:
            for runtime_id in changes.seats:
                self.fleet.reload_seat(runtime_id, now_ms)
                if self.watch is not None:
                    self._watch_seat(runtime_id)
            if changes.tasks:
                self.fleet.reload_tasks()
                if self.watch is not None:
                    self.watch.watch_catalog([], self._scope_directories())
                    self.watch.watch_events(self.events.directory)
                    self.watch.watch_asks(self._asks_directory())
        if changes.usage or changes.catalog:  # catalog.kdl declares the accounts the header shows
            self.usage = read_usage(self.environ, now_ms // 1000, self.location.root)
        if changes.events or changes.catalog or changes.tasks:
            changes.events = self.events.refresh() or changes.events
        return changes

    def _watch_everything(self) -> None:
        watch = self.watch
        agents = self.location.root / AGENTS_DIR
        watch.watch_catalog([agents] + [path for path in agents.iterdir() if path.is_dir()] if agents.is_dir() else [],
                            self._scope_directories())
        for runtime_id in self.fleet.discovered:
            self._watch_seat(runtime_id)
        watch.watch_usage(self.usage.watched)
        watch.watch_events(self.events.directory)
        watch.watch_asks(self._asks_directory())

    def _watch_seat(self, runtime_id: str) -> None:
        """The seat's directories, and a native seat's delivery ledger once its pump made it."""
        seat = self.fleet.discovered.get(runtime_id)
        if seat is None:
            return
        self.watch.watch_seat(runtime_id, seat.directory)
        view = self.fleet.seats.get(runtime_id)
        if view is not None and view.deliveries is not None:
            from st2.delivery.ledger import ledger_location

            self.watch.watch_ledger(runtime_id, ledger_location(self.fleet.scope_directory(), runtime_id)[0].parent)

    def _asks_directory(self):
        from st2.runtime import layout

        return layout.asks(RuntimeScope(self.location.root, self.location.host).directory)

    def _scope_directories(self):
        scope = RuntimeScope(self.location.root, self.location.host)
        return [scope.directory, scope.tasks, scope.parks, scope.unpark_requests]
