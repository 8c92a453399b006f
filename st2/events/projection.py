"""One projection of the fleet for events: the roster's own rows, this host's park markers and
the usage verdict, grouped so one seat's record write re-reads that seat alone.

Groups: ``seat:<host>.<identity>`` (from :func:`st2.roster.build.seat_row`, the function the
roster and ``st2 top`` build each row with), ``#parks`` (the supervisor's park reader,
:func:`st2.supervisor.park.believed`, handed in: this package sits below the supervisor, per
marker of this host's runtime scope) and ``#usage`` (:func:`st2.kit.usage.verdict.verdict`, judged
as ``st2 top`` judges it: no refresh spawned, no sample appended; the host's verdict, and each
declared account's with its own knobs, keyed and evidenced by the account's name).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from st2.catalog.discovery import discover
from st2.catalog.location import CatalogLocation
from st2.events import facets
from st2.events.facets import Facet
from st2.roster.build import seat_row
from st2.runtime.scope import RuntimeScope
from st2.runtime.session_probe import SessionProbe


class FleetProjection:
    def __init__(self, location: CatalogLocation, scope: RuntimeScope, park_reader, environ=None) -> None:
        self.location = location
        self.park_reader = park_reader  # (scope, task runtime id) -> (reason, parkedAtMs, attempts) | None
        self.scope = scope
        self.environ = os.environ if environ is None else environ
        self.seats: dict[str, object] = {}  # runtime id -> DiscoveredSeat
        self.usage_file: str | None = None
        self.account_usage_files: list[str] = []  # each declared account's snapshot
        self.deadlines: dict[str, int] = {}  # runtime id -> wall ms its records go stale by age
        # Seats declaring an account: their budget hold changes with no seat record written (the
        # account's snapshot is rewritten elsewhere), so each usage re-judgement re-reads them.
        self.accounted: set[str] = set()

    def rediscover(self) -> None:
        self.seats = {seat.runtime_id: seat for seat in discover(self.location.root).seats}

    def seat(self, runtime_id: str, now_ms: int, probe: SessionProbe | None = None) -> dict[str, Facet] | None:
        """One seat's facets, or None when it is no longer declared."""
        seat = self.seats.get(runtime_id)
        if seat is None or not os.path.exists(seat.declaration_path):
            return None
        probe = probe or SessionProbe(str(self.location.root), self.location.host)
        row, _ = seat_row(self.location.root, seat, now_ms, enrich=False, host=self.location.host,
                          probe=probe if seat.host == self.location.host else None)
        deadline = facets.stale_deadline_ms(row)
        if row.budget_hold is not None:   # the hold lifts by itself when its window resets
            deadline = row.budget_hold.until_ms if deadline is None else min(deadline, row.budget_hold.until_ms)
        if row.account is not None:
            self.accounted.add(runtime_id)
        else:
            self.accounted.discard(runtime_id)
        if deadline is None:
            self.deadlines.pop(runtime_id, None)
        else:
            self.deadlines[runtime_id] = deadline
        return facets.seat_facets(row)

    def due(self, now_ms: int) -> set[str]:
        """The seats whose records went stale by age at ``now_ms`` since they were last read."""
        return {runtime_id for runtime_id, deadline in self.deadlines.items() if deadline <= now_ms}

    def next_deadline_ms(self) -> int | None:
        return min(self.deadlines.values()) if self.deadlines else None

    def parks(self) -> dict[str, Facet]:
        found: dict[str, Facet] = {}
        try:
            names = sorted(os.listdir(self.scope.parks))
        except OSError:
            return found
        for name in names:
            if name.startswith(".") or not name.endswith(".json"):
                continue
            task = name[: -len(".json")]
            parked = self.park_reader(self.scope, task)
            if parked is None:
                continue
            name_key, facet = facets.park_facet(self.seat_of(task), task, *parked)
            found[name_key] = facet
        return found

    def seat_of(self, task: str) -> str:
        """The seat a task's runtime id belongs to (``<host>.<identity>[.<name>]``)."""
        best = None
        for runtime_id in self.seats:
            if (task == runtime_id or task.startswith(runtime_id + ".")) and (best is None or len(runtime_id) > len(best)):
                best = runtime_id
        return best or ".".join(task.split(".")[:2])

    def usage(self, now_ms: int) -> dict[str, Facet]:
        from st2.kit.usage import knobs as knob_table
        from st2.kit.usage.verdict import verdict, verdict_word

        line, _ = verdict([], self.environ, now_ms // 1000, io.StringIO(), refreshing=False, sampling=False)
        try:
            self.usage_file = knob_table.usage_paths(knob_table.resolve(self.environ), self.environ).usage_file
        except knob_table.KnobError:
            self.usage_file = None
        found = facets.usage_facets(verdict_word(line), line)
        self.account_usage_files = []
        for name, scoped in self._accounts():
            line, _ = verdict([], scoped, now_ms // 1000, io.StringIO(), refreshing=False, sampling=False)
            found.update(facets.usage_facets(verdict_word(line), line, name))
            try:
                self.account_usage_files.append(knob_table.usage_paths(knob_table.resolve(scoped), scoped).usage_file)
            except knob_table.KnobError:
                pass
        return found

    def _accounts(self) -> list:
        """``[(name, environ)]`` of each account ``catalog.kdl`` declares, by name."""
        root = str(self.location.root)
        if not os.path.isfile(os.path.join(root, "catalog.kdl")):
            return []
        from st2.accounts.scope import account_environ, declared_accounts

        return [(name, account_environ(account, root, self.environ))
                for name, account in sorted(declared_accounts(root).items())]

    def everything(self, now_ms: int) -> dict[str, dict[str, Facet]]:
        """Every group, after a fresh discovery."""
        self.rediscover()
        self.deadlines = {}
        probe = SessionProbe(str(self.location.root), self.location.host)
        groups: dict[str, dict[str, Facet]] = {}
        for runtime_id in self.seats:
            seat_facets = self.seat(runtime_id, now_ms, probe)
            if seat_facets is not None:
                groups[facets.seat_group(runtime_id)] = seat_facets
        groups[facets.PARKS_GROUP] = self.parks()
        groups[facets.USAGE_GROUP] = self.usage(now_ms)
        return groups

    def seat_directories(self) -> dict[str, Path]:
        return {runtime_id: Path(seat.directory) for runtime_id, seat in self.seats.items()}
