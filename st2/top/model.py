"""The fleet view's model: one :class:`SeatView` per seat, built from the same readers the CLI
uses — the roster row (:func:`st2.roster.build.seat_row`), the task inventory
(:func:`st2.supervisor.inventory.inventory`) and the bus's unread-mail reader — and rendered to
cells by the roster's own human column functions. Nothing here re-derives a projection.

Default order: seats blocked on a human first, then by identity. Any column sorts.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from st2.bus import boxes
from st2.catalog.discovery import discover
from st2.catalog.location import CatalogLocation
from st2.declarations.diagnostics import one_line
from st2.events.facets import park_word
from st2.roster.build import seat_row
from st2.roster.human import activity_column, context_column, observed_column
from st2.roster.row import RosterRow
from st2.runtime.session_probe import SessionProbe

COLUMNS = ("HOST", "AGENT", "PRESENCE", "DESIRED", "OBSERVED", "CONTEXT", "INBOX", "OLDEST", "TASKS")
SORT_KEYS = tuple(column.lower() for column in COLUMNS)


@dataclass
class SeatView:
    """One seat: its roster row, the age of its oldest unread message, its tasks' states and, for
    a native seat of this host, its delivery ledger's entries by phase
    (:func:`st2.delivery.ledger.phase_counts`)."""

    row: RosterRow
    oldest_unread_ms: int | None = None
    tasks: list[dict] = field(default_factory=list)
    deliveries: dict[str, int] | None = None  # a native seat's delivery ledger entries by phase

    @property
    def identity(self) -> str:
        return self.row.identity

    @property
    def blocked_on_human(self) -> bool:
        observed = self.row.observed_state
        return observed is not None and observed.blocked_on_human

    @property
    def state_word(self) -> str:
        """The observed state word a state filter matches (``-`` when there is no record)."""
        observed = self.row.observed_state
        return observed.state if observed is not None else "-"

    def task_column(self) -> str:
        """``-`` without tasks, else the troubled ones (``parked``, ``exited``, ``crash-looping``)
        by name, or ``ok N`` when all N run."""
        if not self.tasks:
            return "-"
        troubled = [f"{task['task']}:{task_trouble(task)}" for task in self.tasks if task_trouble(task)]
        return " ".join(troubled) if troubled else f"ok {len(self.tasks)}"

    def cells(self, now_ms: int) -> tuple[str, ...]:
        row = self.row
        desired = row.desired_state + (f" ({one_line(row.desired_state_reason)})" if row.desired_state_reason else "")
        oldest = "-" if self.oldest_unread_ms is None else activity_column(self.oldest_unread_ms, now_ms)
        presence = row.status + (" held:budget" if row.budget_hold is not None else "")
        return (row.host, row.bare_identity, presence, desired, observed_column(row.observed_state),
                context_column(row.context), str(row.inbox), oldest, self.task_column())

    def sort_value(self, column: str):
        row = self.row
        if column == "context":
            percent = row.context.used_percent if row.context is not None else None
            return -1.0 if percent is None else float(percent)
        if column == "inbox":
            return row.inbox
        if column == "oldest":
            return -(self.oldest_unread_ms or 0) if self.oldest_unread_ms else 0
        return self.cells(0)[SORT_KEYS.index(column)]


def task_trouble(task: dict) -> str | None:
    """An inventory row's trouble word, or None for a task that is as it should be: ``parked``
    (``crash-loop`` when the supervisor parked it for exiting past its restart policy), or the
    runtime state of a task that should run and does not (``exited``, ``absent``,
    ``indeterminate``)."""
    parked = task.get("parked")
    if parked:
        return park_word(str(parked.get("reason", "")))
    if task.get("admission"):
        return f"queued#{task['admission']['position']}"   # waiting for its account's admission
    state = task["runtime"]["state"]
    if task["desiredState"] == "running" and state != "running":
        return state
    return None


def relaunch_queue_line(seats, now_ms: int) -> str | None:
    """``relaunch queue: main 12 (next in 2s), spare 3 (next in 1s)``: per account, how many agent
    tasks wait for admission (:mod:`st2.accounts.admission`) and when the next starts; None when
    none waits."""
    queues: dict[str, list[int]] = {}
    for seat in seats:
        for task in seat.tasks:
            if task.get("admission"):
                queues.setdefault(task["admission"]["account"], []).append(task["admission"]["startsAt"])
    if not queues:
        return None
    parts = [f"{name} {len(starts)} (next in {max(0, -(-(min(starts) - now_ms) // 1000))}s)"
             for name, starts in sorted(queues.items())]
    return "relaunch queue: " + ", ".join(parts)


@dataclass
class Filters:
    host: str | None = None
    harness: str | None = None
    state: str | None = None  # an observed state word, a presence, or "blocked"
    text: str = ""

    def admit(self, seat: SeatView, now_ms: int) -> bool:
        row = seat.row
        if self.host and row.host != self.host:
            return False
        observed_harness = row.observed_state.harness if row.observed_state is not None else None
        if self.harness and (row.harness or observed_harness) != self.harness:
            return False
        if self.state:
            words = {seat.state_word, row.status, row.desired_state} | ({"blocked"} if seat.blocked_on_human else set())
            if self.state not in words:
                return False
        if self.text:
            haystack = " ".join(seat.cells(now_ms)) + " " + (row.name or "")
            if self.text.lower() not in haystack.lower():
                return False
        return True


class Fleet:
    """Every seat of a catalog, re-readable one seat at a time. ``cache`` (a
    :class:`st2.runtime.declaration_cache.DeclarationCache`, as ``st2 agents`` keeps it) serves unchanged
    declarations' facts without a parse, and is saved after each whole load."""

    def __init__(self, location: CatalogLocation, inventory_reader=None, cache=None) -> None:
        self.location = location
        self.seats: dict[str, SeatView] = {}
        self.discovered: dict[str, object] = {}
        self.problems: list[str] = []
        self.inventory_errors: list[str] = []
        self._inventory_reader = inventory_reader
        self._cache = cache
        self._scope = None

    def load(self, now_ms: int) -> None:
        """Discover the catalog and read every seat (one session probe for them all) and the task
        inventory."""
        found = discover(self.location.root)
        self.problems = [str(error) for error in getattr(found, "errors", [])]
        self.discovered = {seat.runtime_id: seat for seat in found.seats}
        self.seats = {}
        probe = SessionProbe(str(self.location.root), self.location.host)
        for runtime_id in self.discovered:
            self.reload_seat(runtime_id, now_ms, probe)
        if self._cache is not None:
            self._cache.keep_only({os.fspath(seat.declaration_path) for seat in found.seats})
            self._cache.save()
        self.reload_tasks()

    def reload_seat(self, runtime_id: str, now_ms: int, probe: SessionProbe | None = None) -> None:
        """Re-read one seat (its declaration, records and inbox); drop it when it went away.
        ``probe`` is this host's session probe (a fresh one when not given)."""
        seat = self.discovered.get(runtime_id)
        if seat is None or not os.path.exists(seat.declaration_path):
            self.seats.pop(runtime_id, None)
            return
        row, _ = seat_row(self.location.root, seat, now_ms, enrich=True, host=self.location.host, probe=probe,
                          cache=self._cache)
        unread = boxes.unread_names(seat.directory)  # the roster's own unread rule
        oldest = int(unread[0][:13]) if unread else None
        tasks = self.seats[runtime_id].tasks if runtime_id in self.seats else []
        self.seats[runtime_id] = SeatView(row, oldest, tasks, self._deliveries(row, runtime_id))

    def _deliveries(self, row: RosterRow, runtime_id: str) -> dict[str, int] | None:
        if row.host != self.location.host or row.harness is None:
            return None
        from st2.delivery.ledger import PROFILES, phase_counts

        if row.harness not in PROFILES:
            return None
        return phase_counts(self.scope_directory(), runtime_id, row.harness, row.identity)

    def scope_directory(self):
        """This host's runtime scope directory (resolved once)."""
        if self._scope is None:
            from st2.runtime.scope import RuntimeScope

            self._scope = RuntimeScope(self.location.root, self.location.host).directory
        return self._scope

    def reload_tasks(self) -> None:
        """Re-read the task inventory (this host's tasks) and attach each task to its seat."""
        if self._inventory_reader is not None:
            envelope = self._inventory_reader(self.location)
        else:
            from st2.supervisor.inventory import inventory

            # No second read of the catalog to catch declarations changing meanwhile: the view
            # reads the inventory again at each declaration change its watch sees.
            envelope = inventory(self.location, recheck=False)
        self.inventory_errors = list(envelope.get("errors", []))
        by_seat: dict[str, list[dict]] = {}
        for task in envelope.get("tasks", []):
            by_seat.setdefault(task["agent"], []).append(task)  # the agent's runtime id
        for runtime_id, seat in self.seats.items():
            seat.tasks = by_seat.get(runtime_id, [])

    def visible(self, filters: Filters, now_ms: int, sort: str | None = None, reverse: bool = False) -> list[SeatView]:
        """The admitted seats in view order: blocked-on-human first then identity by default,
        else by ``sort`` (a :data:`SORT_KEYS` word)."""
        seats = [seat for seat in self.seats.values() if filters.admit(seat, now_ms)]
        if sort is None:
            seats.sort(key=lambda seat: (not seat.blocked_on_human, seat.identity))
            if reverse:
                seats.reverse()
        else:
            seats.sort(key=lambda seat: (seat.sort_value(sort), seat.identity), reverse=reverse)
        return seats
