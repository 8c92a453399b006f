"""The supervisor's archive step (docs/catalog.md §Retirement archives itself).

After each reconcile pass ``st2 up`` archives the local seats whose retirement outlived the
catalog's ``archive-after`` (default ``7d``; ``"0"`` disables the step), through the same
fail-closed eligibility as ``st2 catalog archive`` and at most :data:`PASS_LIMIT` seats per pass
(the rest drain on later passes). It never queues for the authoring lock: a contended lock skips
the step, and the seats are still due next pass. The grace period runs from the supervisor's first
observation of the retirement (:mod:`st2.authoring.retired_ledger`). A due seat whose worktree
holds the seat's work is skipped, naming what would be lost (Doctor advises the same:
:func:`st2.authoring.worktrees.holding_work`); only an operator archives it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from st2.authoring import archive, retired_ledger, worktrees
from st2.authoring.transaction import LockContended, authoring
from st2.declarations.catalog import load_catalog_declaration
from st2.catalog.location import CatalogLocation

PASS_LIMIT = 25


@dataclass
class StepReport:
    skipped: str | None = None                  # why the step did nothing at all
    archived: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    observed: int = 0                           # retired seats on the ledger after the step

    def lines(self) -> list[str]:
        if self.skipped:
            return [f"archive step skipped: {self.skipped}"] if self.skipped != "disabled" else []
        return ([f"archived {agent} (retired past archive-after)" for agent in self.archived]
                + [f"not archived: {refusal}" for refusal in self.refused])


def _has_work(location: CatalogLocation, retired: set[str], grace_ms: int, now_ms: int) -> bool:
    """Advisory, without the lock: whether the ledger would change or a seat is due, or an
    interrupted archive move may await recovery."""
    if any(path.name.endswith(archive.PENDING_SUFFIX) for path in location.paths.archive_root.glob("*/.*")):
        return True
    rows = retired_ledger.load(location).get(location.host, {})
    observed = retired_ledger.observe(rows, retired, now_ms)
    return observed != rows or bool(retired_ledger.due(observed, grace_ms, now_ms))


def archive_step(location: CatalogLocation, now_ms: int, recorded_ids: archive.RecordedIds,
                 limit: int = PASS_LIMIT, retired_hint: set[str] | None = None) -> StepReport:
    """Run one archive step. Never blocks on the authoring lock and never raises for a bad
    catalog: every outcome is in the report. ``retired_hint`` (the retired seats the pass just
    read) lets a step with nothing to record and nothing due skip the lock and the second catalog
    read entirely; the decision that moves anything is re-made under the lock."""
    declaration, _ = load_catalog_declaration(location.root)
    grace = declaration.archive_after_seconds
    if grace is None:
        return StepReport(skipped="disabled")
    if retired_hint is not None and not _has_work(location, retired_hint, int(grace * 1000), now_ms):
        return StepReport()
    try:
        with authoring(location, timeout=0) as transaction:
            archive.recover(transaction)
            try:
                seats = archive.read_declarations(location)
            except archive.ArchiveRefused as refusal:
                return StepReport(skipped=str(refusal))
            retired = {seat.identity for seat, decl in seats if seat.host == location.host and decl.retired}
            hosts = retired_ledger.load(location)
            observed = retired_ledger.observe(hosts.get(location.host, {}), retired, now_ms)
            due = retired_ledger.due(observed, int(grace * 1000), now_ms)
            candidates, refused = [], []
            if due:
                holding = worktrees.holding_work(seats, location.host, due)
                candidates, refused = archive.plan(location, None, recorded_ids, limit=limit,
                                                   only=set(due) - set(holding), seats=seats)
                refused += [archive.Refusal(f"{location.host}.{identity}", "worktree-holds-work", message)
                            for identity, message in sorted(holding.items())]
                archive.archive_locked(transaction, candidates, refused, now_ms)
            for candidate in candidates:
                observed.pop(candidate.identity, None)
            if observed != hosts.get(location.host, {}):
                hosts[location.host] = observed
                retired_ledger.store(location, {host: seats for host, seats in hosts.items() if seats},
                                     transaction.staging)
            return StepReport(archived=[candidate.id for candidate in candidates],
                              refused=[f"{refusal.id} [{refusal.code}] {refusal.message}" for refusal in refused],
                              observed=len(observed))
    except LockContended:
        return StepReport(skipped="the catalog authoring lock is held; the seats stay due for the next pass")
    except OSError as error:
        return StepReport(skipped=f"cannot archive: {error}")
