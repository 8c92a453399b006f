"""``st2 catalog archive`` / ``unarchive``: moving a retired seat out of the live catalog and back
(docs/catalog.md §Archival).

Archival renames the seat's whole directory, byte-identical, to ``.st2/archive/<host>/<identity>/``
(under the control plane, which discovery structurally never walks) and records a tombstone beside
it. Eligibility fails closed, for every selected seat, before anything moves: the catalog must be
fully readable (a declaration that does not load could be the one naming a candidate as its
supervisor), and the seat must be retired, have no launch record (live or dead) for any of its
tasks, be named as ``supervisor`` by no declaration that stays, and have a free archive slot.
A seat's worktree is never moved or removed: each archived entry names it and what work it holds
(:mod:`st2.authoring.worktrees`).

Crash safety, one rename per seat: the tombstone is first published as
``.<identity>.tombstone.pending`` beside the archive slot, then the seat directory is renamed into
the slot, then the pending tombstone is renamed to ``<identity>.tombstone.json``. A SIGKILL at any
point leaves the seat either live or archived, never both or neither; :func:`recover`, run under the
lock by every later archive, unarchive and supervisor archive step, finishes or discards an
interrupted move (a pending tombstone beside an archived seat is completed, beside a live seat
dropped; a tombstone whose seat is live again is removed). Unarchive is the exact reverse rename
and refuses while a live seat of that identity exists.

Everything runs inside one authoring transaction, which advances the catalog generation when a
seat moved. The runtime-record check is given as a callable (``recorded_ids``) so this package
stays below the supervisor that owns launch records.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from st2.authoring import tombstone as tombstones
from st2.authoring import worktrees
from st2.authoring.faults import checkpoint
from st2.authoring.transaction import Transaction, authoring
from st2.catalog.discovery import discover
from st2.catalog.location import CatalogLocation
from st2.catalog.names import seat_refusal
from st2.declarations import load_agent
from st2.fs.atomic import ensure_directory, fsync_directory, publish
from st2.fs.read import RECORD_LIMIT, read_regular

ARCHIVE_SCHEMA = "st2.catalog-archive.v1"
UNARCHIVE_SCHEMA = "st2.catalog-unarchive.v1"
PENDING_SUFFIX = ".tombstone.pending"

RecordedIds = Callable[[], Iterable[str]]


class ArchiveRefused(Exception):
    """Nothing moved."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


@dataclass(frozen=True)
class Candidate:
    host: str
    identity: str
    reason: str | None
    worktree: dict | None = None   # the kept worktree (:func:`st2.authoring.worktrees.note`)

    @property
    def id(self) -> str:
        return f"{self.host}.{self.identity}"


@dataclass(frozen=True)
class Refusal:
    id: str
    code: str
    message: str

    def wire(self) -> dict:
        return {"id": self.id, "code": self.code, "message": self.message}


@dataclass
class ArchiveResult:
    host: str
    dry_run: bool
    archived: list[dict] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    def wire(self) -> dict:
        return {"schema": ARCHIVE_SCHEMA, "host": self.host, "archiveRoot": ".st2/archive",
                "dryRun": self.dry_run, "archived": self.archived,
                "refused": [refusal.wire() for refusal in self.refused]}

    def lines(self) -> list[str]:
        verb = "would archive" if self.dry_run else "archived"
        lines = [f"{verb} {entry['id']} -> {entry['to']}{kept_worktree(entry)}" for entry in self.archived]
        lines += [f"refused {refusal.id} [{refusal.code}]: {refusal.message}" for refusal in self.refused]
        return lines or ["nothing to archive"]


def _slot(location: CatalogLocation, host: str, identity: str) -> Path:
    return location.paths.archive_root / host / identity


def _tombstone_path(location: CatalogLocation, host: str, identity: str) -> Path:
    return location.paths.archive_root / host / f"{identity}{tombstones.SUFFIX}"


def _pending_path(location: CatalogLocation, host: str, identity: str) -> Path:
    return location.paths.archive_root / host / f".{identity}{PENDING_SUFFIX}"


def _relative(location: CatalogLocation, path: Path) -> str:
    return str(path.relative_to(location.root))


# -- reading the catalog -------------------------------------------------------------------------

def read_declarations(location: CatalogLocation):
    """Every seat with its loaded declaration. Raise :class:`ArchiveRefused` when the catalog is
    not completely readable: a hidden supervisor reference must never read as none."""
    found = discover(location.root)
    problems = [f"{error.source}: {error.message}" for error in found.errors]
    seats = []
    for seat in found.seats:
        declaration, diagnostics = load_agent(seat.declaration_path)
        if declaration is None:
            problems.append("; ".join(d.human().splitlines()[0] for d in diagnostics if d.severity == "error"))
        else:
            seats.append((seat, declaration))
    if problems:
        raise ArchiveRefused("catalog-incomplete", "the catalog does not read completely, so a supervisor "
                                                   "reference could be hidden: " + "; ".join(problems))
    return seats


def task_ids(declaration, host: str) -> set[str]:
    return {task.id for task in declaration.runtime_tasks(host)} | {f"{host}.{declaration.identity}"}


def eligibility(location: CatalogLocation, seat, declaration, seats, recorded: set[str],
                leaving: set[tuple[str, str]]) -> Candidate | Refusal:
    """Whether one seat may leave together with ``leaving`` (``(host, identity)`` pairs)."""
    host, identity = seat.host, seat.identity
    agent = f"{host}.{identity}"
    if not declaration.retired:
        return Refusal(agent, "not-retired", f"desired state is {declaration.desired_state!r}; "
                                             "archive requires retired")
    prefix = f"{agent}."
    records = sorted(rid for rid in recorded if rid in task_ids(declaration, host) or rid.startswith(prefix))
    if records:
        return Refusal(agent, "runtime-record-present", "retirement is incomplete: a launch record remains for "
                                                        + ", ".join(records))
    dependents = sorted(f"{other_seat.host}.{other_seat.identity}" for other_seat, other in seats
                        if (other_seat.host, other_seat.identity) not in leaving
                        and (other_seat.host, other_seat.identity) != (host, identity)
                        and other.supervisor in (identity, agent))
    if dependents:
        return Refusal(agent, "supervisor-referenced", f"still supervises {', '.join(dependents)}")
    if os.path.lexists(_slot(location, host, identity)) or os.path.lexists(_tombstone_path(location, host, identity)):
        return Refusal(agent, "archive-occupied", f"the archive already holds "
                                                  f"{_relative(location, _slot(location, host, identity))}; "
                                                  "unarchive it or move it aside first")
    return Candidate(host, identity, declaration.desired_state_reason, worktrees.note(declaration, host))


def plan(location: CatalogLocation, identities: list[str] | None, recorded_ids: RecordedIds,
         limit: int | None = None, only: set[str] | None = None,
         seats: list | None = None) -> tuple[list[Candidate], list[Refusal]]:
    """Decide, moving nothing, which seats of the selected host leave. ``identities`` ``None``
    selects every retired seat (narrowed to ``only`` when given); at most ``limit`` candidates.
    ``seats`` is :func:`read_declarations`'s result when the caller already has it."""
    seats = read_declarations(location) if seats is None else seats
    host = location.host
    local = {seat.identity: (seat, declaration) for seat, declaration in seats if seat.host == host}
    refused: list[Refusal] = []
    selected = []
    if identities is None:
        selected = [pair for identity, pair in sorted(local.items())
                    if pair[1].retired and (only is None or identity in only)]
    else:
        for identity in identities:
            bare = identity[len(host) + 1:] if identity.startswith(f"{host}.") else identity
            if bare not in local:
                refused.append(Refusal(f"{host}.{bare}", "unknown-identity",
                                       f"no declaration for {bare!r} on host {host!r}"))
            else:
                selected.append(local[bare])
    recorded = set(recorded_ids()) if selected else set()
    # Every selected seat counts as leaving, so a supervisor archived with all its dependents is
    # eligible; a bounded pass judges each seat against the batch accepted so far instead.
    leaving = {(seat.host, seat.identity) for seat, _ in selected} if limit is None else set()
    candidates: list[Candidate] = []
    for seat, declaration in selected:
        if limit is not None and len(candidates) >= limit:
            break
        verdict = eligibility(location, seat, declaration, seats, recorded, leaving)
        if isinstance(verdict, Refusal):
            refused.append(verdict)
        else:
            candidates.append(verdict)
            leaving.add((seat.host, seat.identity))
    # Re-checked against the final batch: a supervisor leaves only with every dependent it has.
    while True:
        batch = {(candidate.host, candidate.identity) for candidate in candidates}
        staying = next((c for c in candidates if _dependents(seats, c, batch)), None)
        if staying is None:
            break
        candidates.remove(staying)
        refused.append(Refusal(staying.id, "supervisor-referenced",
                               "still supervises " + ", ".join(_dependents(seats, staying, batch))))
    refused.sort(key=lambda refusal: refusal.id)
    return candidates, refused


def _dependents(seats, candidate: Candidate, leaving: set[tuple[str, str]]) -> list[str]:
    return sorted(f"{seat.host}.{seat.identity}" for seat, declaration in seats
                  if (seat.host, seat.identity) not in leaving
                  and declaration.supervisor in (candidate.identity, candidate.id))


# -- moving ---------------------------------------------------------------------------------------

def _move_out(transaction: Transaction, candidate: Candidate, now_ms: int) -> dict:
    location = transaction.location
    host_root = ensure_directory(location.paths.archive_root / candidate.host)
    live = location.paths.seat(candidate.host, candidate.identity).directory
    slot = _slot(location, candidate.host, candidate.identity)
    record = tombstones.Tombstone(candidate.id, candidate.host, candidate.identity, now_ms, candidate.reason,
                                  _relative(location, slot))
    pending = _pending_path(location, candidate.host, candidate.identity)
    publish(pending, record.to_bytes(), transaction.staging, root=location.root, mode=0o600)
    checkpoint("archive-pending")
    os.rename(live, slot)
    fsync_directory(live.parent)
    fsync_directory(host_root)
    transaction.mark_committed()
    checkpoint("archive-moved")
    os.rename(pending, _tombstone_path(location, candidate.host, candidate.identity))
    fsync_directory(host_root)
    checkpoint("archive-tombstoned")
    return _entry(location, candidate, now_ms)


def _entry(location: CatalogLocation, candidate: Candidate, archived_at: int) -> dict:
    return {"id": candidate.id, "host": candidate.host, "identity": candidate.identity,
            "from": _relative(location, location.paths.seat(candidate.host, candidate.identity).directory),
            "to": _relative(location, _slot(location, candidate.host, candidate.identity)),
            "archivedAt": archived_at, "reason": candidate.reason, "worktree": candidate.worktree}


def kept_worktree(entry: dict) -> str:
    """What an archive line adds for a seat's worktree, which archival never removes."""
    worktree = entry.get("worktree")
    if worktree is None:
        return ""
    work = worktree["work"]
    held = f"holds {len(work)} item(s) of work: " + "; ".join(work) if work else "clean"
    return f" (worktree {worktree['path']} kept, {held}; `st2 agent worktree rm {entry['id']}` removes it)"


def archive_locked(transaction: Transaction, candidates: list[Candidate], refused: list[Refusal],
                   now_ms: int) -> ArchiveResult:
    result = ArchiveResult(transaction.location.host, False, refused=refused)
    checkpoint("archive-planned")
    for candidate in candidates:
        result.archived.append(_move_out(transaction, candidate, now_ms))
    return result


def archive(location: CatalogLocation, identities: list[str] | None, recorded_ids: RecordedIds, *,
            now_ms: int, dry_run: bool = False) -> ArchiveResult:
    """Archive ``identities`` (all refused when any one is ineligible) or, with ``None``, every
    eligible retired seat (the ineligible reported). ``dry_run`` plans under no lock and creates
    nothing. Raise :class:`ArchiveRefused` with nothing moved."""
    if not location.root.is_dir():
        raise ArchiveRefused("catalog-unreadable", f"there is no catalog directory at {location.root}")
    if dry_run:
        candidates, refused = plan(location, identities, recorded_ids)
        _refuse_selected(identities, refused)
        result = ArchiveResult(location.host, True, refused=refused)
        result.archived = [_entry(location, candidate, 0) for candidate in candidates]
        return result
    with authoring(location) as transaction:
        recover(transaction)
        candidates, refused = plan(location, identities, recorded_ids)
        _refuse_selected(identities, refused)
        return archive_locked(transaction, candidates, refused, now_ms)


def _refuse_selected(identities: list[str] | None, refused: list[Refusal]) -> None:
    if identities is not None and refused:
        first = refused[0]
        raise ArchiveRefused(first.code, f"refusing to archive {first.id}: {first.message}")


def unarchive(location: CatalogLocation, identity: str) -> dict:
    """Move ``identity`` back to ``agents/<host>/<identity>/`` byte-identically and drop its
    tombstone. Refuse when it is not archived or a live seat of that identity exists."""
    host = location.host
    bare = identity[len(host) + 1:] if identity.startswith(f"{host}.") else identity
    problem = seat_refusal(host, bare)  # the one name rule: never unarchive into a name discovery refuses
    if problem is not None:
        raise ArchiveRefused("invalid-name", problem)
    with authoring(location) as transaction:
        recover(transaction)
        slot = _slot(location, host, bare)
        live = location.paths.seat(host, bare).directory
        if slot.is_symlink() or not slot.is_dir():
            raise ArchiveRefused("not-archived", f"no archived seat at {_relative(location, slot)}")
        if os.path.lexists(live):
            raise ArchiveRefused("live-seat-exists", f"the live catalog already holds {_relative(location, live)}; "
                                                     "remove or rename it before unarchiving")
        record = tombstones.read(_read_optional(_tombstone_path(location, host, bare)))
        transaction.make_seat_parent(host)
        checkpoint("unarchive-planned")
        os.rename(slot, live)
        fsync_directory(live.parent)
        fsync_directory(slot.parent)
        transaction.mark_committed()
        checkpoint("unarchive-moved")
        _unlink_optional(_tombstone_path(location, host, bare))
        fsync_directory(slot.parent)
    return {"schema": UNARCHIVE_SCHEMA, "id": f"{host}.{bare}", "host": host, "identity": bare,
            "from": _relative(location, slot), "to": _relative(location, live),
            "archivedAt": record.archived_at if record is not None else None}


def recover(transaction: Transaction) -> list[str]:
    """Finish or discard archive moves a crash interrupted; return what was repaired."""
    location = transaction.location
    root = location.paths.archive_root
    repaired: list[str] = []
    if not root.is_dir():
        return repaired
    for host_root in sorted(path for path in root.iterdir() if path.is_dir() and not path.is_symlink()):
        host = host_root.name
        for entry in sorted(host_root.iterdir()):
            name = entry.name
            if name.startswith(".") and name.endswith(PENDING_SUFFIX):
                identity = name[1:-len(PENDING_SUFFIX)]
                archived = _slot(location, host, identity).is_dir()
                live = os.path.lexists(location.paths.seat(host, identity).directory)
                if archived and not live:
                    os.rename(entry, _tombstone_path(location, host, identity))
                    repaired.append(f"completed the archival of {host}.{identity}")
                else:
                    entry.unlink()
                    repaired.append(f"discarded an interrupted archival of {host}.{identity}")
                fsync_directory(host_root)
            elif name.endswith(tombstones.SUFFIX):
                identity = name[:-len(tombstones.SUFFIX)]
                if not os.path.lexists(_slot(location, host, identity)) and \
                        location.paths.seat(host, identity).directory.is_dir():
                    entry.unlink()
                    fsync_directory(host_root)
                    repaired.append(f"completed the unarchival of {host}.{identity}")
    if repaired:
        transaction.mark_committed()
    return repaired


def _read_optional(path: Path) -> bytes | None:
    try:
        return read_regular(path, RECORD_LIMIT)[0]
    except OSError:
        return None


def _unlink_optional(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


# -- observing (st2 catalog graph) ----------------------------------------------------------------

def observe(location: CatalogLocation) -> tuple[list[tombstones.Tombstone], list[dict]]:
    """Every readable tombstone under the archive root, and one issue per unexplained entry: an
    archived directory without a readable tombstone, a tombstone without its directory, an
    interrupted move, or a stray entry. Read-only."""
    root = location.paths.archive_root
    archived: list[tombstones.Tombstone] = []
    issues: list[dict] = []
    if not os.path.lexists(root):
        return archived, issues

    def issue(path: Path, message: str) -> None:
        issues.append({"severity": "error", "code": "archive-unexplained", "path": _relative(location, path),
                       "message": message})

    if root.is_symlink() or not root.is_dir():
        issue(root, "the archive root is not a real directory")
        return archived, issues
    for host_root in sorted(root.iterdir()):
        if host_root.is_symlink() or not host_root.is_dir():
            issue(host_root, "archive root child is not a host directory")
            continue
        directories, explained = set(), set()
        for entry in sorted(host_root.iterdir()):
            name = entry.name
            if name.startswith(".") and name.endswith(PENDING_SUFFIX):
                issue(entry, "an archive move was interrupted; the next `st2 catalog archive` or `st2 up` "
                             "archive step completes it")
            elif name.endswith(tombstones.SUFFIX):
                identity = name[:-len(tombstones.SUFFIX)]
                record = tombstones.read(_read_optional(entry))
                if record is None or (record.host, record.identity) != (host_root.name, identity):
                    issue(entry, "archive tombstone is unreadable or does not describe its own identity")
                else:
                    explained.add(identity)
                    archived.append(record)
            elif entry.is_dir() and not entry.is_symlink():
                directories.add(name)
            else:
                issue(entry, "unexpected archive-root file")
        for identity in sorted(directories - explained):
            issue(host_root / identity, "archived seat has no readable tombstone")
        for identity in sorted(explained - directories):
            issue(host_root / f"{identity}{tombstones.SUFFIX}", "archive tombstone has no archived seat directory")
            archived = [record for record in archived if (record.host, record.identity) != (host_root.name, identity)]
    archived.sort(key=lambda record: record.id)
    return archived, issues
