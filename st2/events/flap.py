"""The journal's budget per facet: a flapping seat cannot roll every other seat's events off the
two 1 MiB segments (:mod:`st2.events.journal`).

Each facet key (a kind of one seat, with its subject: :func:`st2.events.facets.key`) may journal
:data:`BUDGET` transitions per window of :data:`WINDOW_SECONDS`, the window opening at its first
transition. Past that, the key's transitions are *held*: not journaled, and its journaled value
stays the one before them (the engine keeps it in its projection), so when the window ends the
engine re-reads the key's group and the diff journals the net change — one transition from the
last journaled value to the current one, or none when the seat flapped back. Held transitions
are never journaled later one by one; each ``from`` still equals the previous ``to``. At most
``BUDGET + 1`` lines per key per window, whatever the rate (a line is about 250 bytes: one
flapping key adds at most about 5 KB a minute, so it takes hours, not a minute, to fill the 2 MiB
the journal holds).

Pure bookkeeping on a monotonic clock the caller passes; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from st2.events import facets
from st2.events.event import FleetEvent
from st2.events.journal import subject_of

BUDGET = 20
WINDOW_SECONDS = 60.0


def key_of(item: FleetEvent) -> str:
    """The facet key a transition is about (as :func:`st2.events.journal.apply` reads it)."""
    return facets.key(item.kind, item.seat, subject_of(item))


@dataclass
class Window:
    opened: float
    count: int = 0
    held: int = 0


@dataclass
class FlapBudget:
    budget: int = BUDGET
    window_seconds: float = WINDOW_SECONDS
    windows: dict[str, Window] = field(default_factory=dict)

    def admit(self, events: list[FleetEvent], now: float) -> tuple[list[FleetEvent], list[FleetEvent], list[str]]:
        """``(journaled, held, newly held keys)``: which of ``events`` (in order) stay within
        their key's budget at monotonic ``now``, which are held, and the keys that began holding
        in this call (the caller says so once per key and window)."""
        admitted: list[FleetEvent] = []
        held: list[FleetEvent] = []
        began: list[str] = []
        for item in events:
            name = key_of(item)
            window = self.windows.get(name)
            if window is None or now >= window.opened + self.window_seconds:
                window = self.windows[name] = Window(now)
            if window.count < self.budget:
                window.count += 1
                admitted.append(item)
                continue
            if window.held == 0:
                began.append(name)
            window.held += 1
            held.append(item)
        return admitted, held, began

    def refund(self, events: list[FleetEvent]) -> None:
        """Take back what :meth:`admit` counted for ``events`` (admitted or held) when none of
        them was journaled (a refused journal): a held projection tries them all again."""
        for item in events:
            window = self.windows.get(key_of(item))
            if window is None:
                continue
            if window.held:
                window.held -= 1
            elif window.count:
                window.count -= 1

    def release(self, now: float) -> list[str]:
        """The keys whose held window ended by ``now``: the caller re-reads their groups so the
        net change is journaled. Ended windows are forgotten."""
        released = [name for name, window in self.windows.items()
                    if now >= window.opened + self.window_seconds and window.held]
        for name in [name for name, window in self.windows.items() if now >= window.opened + self.window_seconds]:
            del self.windows[name]
        return released

    def next_release(self) -> float | None:
        """When the earliest held window ends (monotonic), or None when nothing is held."""
        ends = [window.opened + self.window_seconds for window in self.windows.values() if window.held]
        return min(ends) if ends else None

    def held_seats(self) -> set[str]:
        """The seats with a key held now (their further changes journal nothing until the
        window ends, so re-reading them at every write buys nothing)."""
        seats = set()
        for name, window in self.windows.items():
            kind, seat, _ = facets.split_key(name)
            if window.held and seat is not None and facets.group_of(kind, seat) == facets.seat_group(seat):
                seats.add(seat)
        return seats

    def held_count(self, name: str) -> int:
        window = self.windows.get(name)
        return window.held if window is not None else 0
