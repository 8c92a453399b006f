"""Which seats to re-read: one inotify instance (:class:`st2.fs.watch.MutationWatch`) over every
seat directory, its ``resources`` and its inbox and archive, each watched with the seat's runtime
id as its role; the catalog's ``agents/<host>`` directories (a seat appearing or going away); this
host's runtime scope ``tasks`` and ``parks`` (launch records and park markers: the task
inventory); its fleet event journal (the events pane); the directories of the usage snapshot and
history (the header); a native seat's delivery ledger directory (as the seat); and the scope's ``asks`` (a Claude seat's open permission ask, which the
web face answers).

Mutation-only masks: the view's own reads never wake it. :meth:`FleetWatch.drain` turns the
pending events into a :class:`Changes` the app coalesces before it re-reads anything. When
inotify is unavailable :attr:`FleetWatch.active` is False and the app falls back to a timer."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from st2.catalog.layout import ARCHIVE, DECLARATION, INBOX, RESOURCES
from st2.fs.watch import IGNORED, MutationWatch
from st2.runtime.layout import EVENTS_CURRENT

CATALOG_ROLE = "#catalog"
TASKS_ROLE = "#tasks"
USAGE_ROLE = "#usage"
EVENTS_ROLE = "#events"
ASKS_ROLE = "#asks"
ASK_SUFFIX = ".json"


@dataclass
class Changes:
    seats: set[str] = field(default_factory=set)
    catalog: bool = False
    tasks: bool = False
    usage: bool = False
    events: bool = False
    asks: set[str] = field(default_factory=set)   # runtime ids whose open ask changed

    def __bool__(self) -> bool:
        return bool(self.seats or self.catalog or self.tasks or self.usage or self.events or self.asks)

    def merge(self, other: "Changes") -> None:
        self.seats |= other.seats
        self.catalog |= other.catalog
        self.tasks |= other.tasks
        self.usage |= other.usage
        self.events |= other.events
        self.asks |= other.asks


class FleetWatch:
    def __init__(self) -> None:
        self.watch = MutationWatch()
        self.usage_names: set[str] = set()

    @property
    def active(self) -> bool:
        return self.watch.active

    def fileno(self) -> int:
        return self.watch.fileno()

    def watch_seat(self, runtime_id: str, directory: Path) -> None:
        directory = Path(directory)
        for path in (directory, directory / RESOURCES, directory / RESOURCES / INBOX, directory / RESOURCES / ARCHIVE):
            if path.is_dir():
                self.watch.add(path, runtime_id)

    def watch_ledger(self, runtime_id: str, directory: Path) -> None:
        """A native seat's delivery ledger directory (in the session store), as the seat's role."""
        if Path(directory).is_dir():
            self.watch.add(Path(directory), runtime_id)

    def watch_catalog(self, hosts_directories: list[Path], scope_directories: list[Path]) -> None:
        for path in hosts_directories:
            if Path(path).is_dir():
                self.watch.add(path, CATALOG_ROLE)
        for path in scope_directories:
            # A scope `st2 up` has not created yet: watch its nearest existing ancestor, so its
            # creation reads as a task change (the app then calls this again to go deeper).
            path = Path(path)
            while not path.is_dir() and path.parent != path:
                path = path.parent
            self.watch.add(path, TASKS_ROLE)

    def watch_usage(self, files: list[str]) -> None:
        for name in files:
            directory = os.path.dirname(os.path.abspath(name))
            self.usage_names.add(os.path.basename(name))
            if os.path.isdir(directory):
                self.watch.add(Path(directory), USAGE_ROLE)

    def watch_events(self, directory: Path) -> None:
        """The fleet event journal's directory (skipped until ``st2 up`` has made it; the scope
        directory's watch sees it appear)."""
        if Path(directory).is_dir():
            self.watch.add(Path(directory), EVENTS_ROLE)

    def watch_asks(self, directory: Path) -> None:
        """The scope's open asks (skipped until a hook has made the directory)."""
        if Path(directory).is_dir():
            self.watch.add(Path(directory), ASKS_ROLE)

    def drain(self) -> Changes:
        """Consume every pending event into the set of things to re-read."""
        changes = Changes()
        if not self.active:
            return changes
        for role, name, mask in self.watch.events():
            if role == CATALOG_ROLE:
                changes.catalog = True
            elif role == TASKS_ROLE:
                changes.tasks = True
            elif role == EVENTS_ROLE:
                changes.events = changes.events or name.startswith(EVENTS_CURRENT)  # journal, journal.1
            elif role == ASKS_ROLE:
                if name.endswith(ASK_SUFFIX) and not name.startswith("."):
                    changes.asks.add(name[:-len(ASK_SUFFIX)].removesuffix(".answer"))
            elif role == USAGE_ROLE:
                if name in self.usage_names or mask & IGNORED:
                    changes.usage = True
            else:
                changes.seats.add(role)
                # A declaration rewritten is a change of that seat's tasks too: the inventory
                # (read without its own second pass, see Fleet.reload_tasks) is read again.
                changes.tasks = changes.tasks or name == DECLARATION
        return changes
