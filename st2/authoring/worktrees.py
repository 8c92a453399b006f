"""A seat's worktree when the seat leaves: archival keeps it and names it, auto-archive skips a
seat whose worktree holds work, and ``st2 agent worktree rm`` is the only removal (docs/worktrees.md).

The seat's work is :func:`st2.worktree.work.inspect`'s, with the files st2 itself renders into
the workspace (the render block's targets, a typed driver block's included, such as Claude's
``.claude/settings.local.json``) not counted. Removal refuses, before touching anything, a seat
with a launch record (its agent may be writing there), a directory that is not this seat's own
worktree (a ``.git`` pointing elsewhere, another branch, someone else's lock), and a worktree
holding work unless forced; ``--force`` prints exactly what goes before it removes anything.
A clean worktree is removed with ``git worktree remove`` after its st2-written files are
deleted (git refuses anything else that is untracked); the branch is always kept.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable, NamedTuple

from st2.catalog.layout import DECLARATION
from st2.catalog.location import CatalogLocation
from st2.runtime.runtime_home import catalog_digest
from st2.worktree import checkout
from st2.worktree.git import git
from st2.worktree.work import Work, inspect


class WorktreeRefused(Exception):
    """Nothing was removed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code


class SeatWorktree(NamedTuple):
    runtime_id: str
    path: str
    repository: str        # as declared, expanded
    branch: str
    st2_files: frozenset[str]


def st2_written(declaration, host: str) -> frozenset[str]:
    """The workspace-relative files st2 renders into the seat's workspace."""
    render = declaration.render
    if declaration.drivers:
        from st2.drivers import expand_driver_blocks

        try:
            render = expand_driver_blocks(declaration, host, ["st2"]).render
        except ValueError:
            pass
    return frozenset(os.path.normpath(operation.target) for operation in render if operation.operation != "git-exclude")


def seat_worktree(declaration, host: str) -> SeatWorktree | None:
    worktree = declaration.worktree
    if worktree is None:
        return None
    runtime_id = f"{host}.{declaration.identity}"
    return SeatWorktree(runtime_id, checkout.worktree_path(worktree, runtime_id), checkout.expand(worktree.repo),
                        worktree.branch, st2_written(declaration, host))


def work_of(seat: SeatWorktree) -> Work:
    return inspect(seat.path, seat.repository, seat.branch, seat.st2_files)


def note(declaration, host: str) -> dict | None:
    """What an archived seat's entry says of its worktree (kept, always): ``{"path", "kept",
    "work"}`` with ``work`` the list of what it holds (empty when clean); None without one."""
    seat = seat_worktree(declaration, host)
    if seat is None:
        return None
    return {"path": seat.path, "kept": True, "work": work_of(seat).lines() if os.path.isdir(seat.path) else []}


def holding_work(seats, host: str, identities) -> dict[str, str]:
    """Of ``identities`` (this host's seats among ``seats``, ``(seat, declaration)`` pairs), those
    whose worktree holds the seat's work: identity -> what would be lost, in one line."""
    holding = {}
    for seat, declaration in seats:
        if seat.host != host or seat.identity not in identities:
            continue
        worktree = seat_worktree(declaration, host)
        if worktree is None:
            continue
        work = work_of(worktree)
        if not work.empty:
            holding[seat.identity] = (f"its worktree {worktree.path} holds the seat's work ({work.summary()}): "
                                      + "; ".join(work.lines()))
    return holding


class Removal(NamedTuple):
    runtime_id: str
    path: str
    branch: str
    lost: tuple[str, ...]     # what --force removed with it (empty for a clean one)

    def lines(self) -> list[str]:
        head = f"removed the worktree {self.path} of {self.runtime_id} (branch {self.branch} kept)"
        return [head] + [f"  lost {line}" for line in self.lost]


def find_declaration(location: CatalogLocation, identity: str):
    """The seat's declaration, live or archived: ``(declaration, archived)``."""
    from st2.declarations import load_agent

    host = location.host
    bare = identity[len(host) + 1:] if identity.startswith(f"{host}.") else identity
    from st2.catalog.names import seat_refusal

    problem = seat_refusal(host, bare)
    if problem is not None:
        raise WorktreeRefused("invalid-name", problem)
    live = location.paths.seat(host, bare).directory
    archived = location.paths.archive_root / host / bare
    for directory, is_archived in ((live, False), (archived, True)):
        path = directory / DECLARATION
        if path.is_file():
            declaration, diagnostics = load_agent(path, source=str(path))
            if declaration is None:
                first = next((str(d) for d in diagnostics if d.is_error), "it does not load")
                raise WorktreeRefused("declaration-invalid", first)
            return declaration, is_archived
    raise WorktreeRefused("unknown-identity", f"no declaration for {bare!r} on host {host!r}, live or archived")


def remove(location: CatalogLocation, identity: str, recorded_ids: Callable[[], Iterable[str]], *, force: bool,
           announce: Callable[[str], None]) -> Removal:
    """Remove the seat's worktree (see the module docstring); ``announce`` is told, before
    anything is removed under ``force``, each item that will be lost."""
    declaration, archived = find_declaration(location, identity)
    seat = seat_worktree(declaration, location.host)
    if seat is None:
        raise WorktreeRefused("no-worktree", f"{location.host}.{declaration.identity} declares no worktree")
    if not archived:
        records = sorted(rid for rid in recorded_ids()
                         if rid == seat.runtime_id or rid.startswith(seat.runtime_id + "."))
        if records:
            raise WorktreeRefused("seat-running", f"a launch record remains for {', '.join(records)}: its agent may be "
                                                  "working there; retire or suspend the seat first")
    repository, refusal = checkout.repository(seat.repository)
    if repository is None:
        raise WorktreeRefused("repository-invalid", refusal)
    reason = checkout.lock_reason(seat.runtime_id, catalog_digest(location.root))
    present = os.path.lexists(seat.path)
    if present:
        if os.path.islink(seat.path) or not os.path.isdir(seat.path):
            raise WorktreeRefused("not-a-worktree", f"{seat.path} is not a directory st2 made")
        found, why = checkout.read_checkout(repository, seat.path)
        if found is None:
            raise WorktreeRefused("not-this-seats-worktree", why)
        if found.lock is not None and found.lock != reason:
            raise WorktreeRefused("locked-by-another", f"{seat.path} is locked by someone else ({found.lock})")
    elif checkout.registered(repository, seat.path) is None:
        raise WorktreeRefused("no-worktree", f"there is no worktree at {seat.path}")
    work = work_of(seat)
    lost = tuple(work.lines())
    if not work.empty and not force:
        raise WorktreeRefused("worktree-holds-work", f"{seat.path} holds the seat's work ({work.summary()}): "
                              + "; ".join(lost) + "; commit or push it, or remove with --force")
    for line in lost:
        announce(f"will be lost: {line}")
    if present and work.empty:
        for name in sorted(seat.st2_files):   # only the files st2 itself wrote; git refuses any other
            target = os.path.join(seat.path, name)
            if os.path.isfile(target) and not os.path.islink(target):
                os.unlink(target)
        git(repository.path, "worktree", "unlock", seat.path)
        removed = git(repository.path, "worktree", "remove", seat.path)
        if not removed.ok:  # something appeared since the check: keep it, and keep it locked
            git(repository.path, "worktree", "lock", "--reason", reason, seat.path)
    else:
        removed = git(repository.path, "worktree", "remove", "--force", "--force", seat.path)
    if not removed.ok:
        raise WorktreeRefused("git-refused", f"git worktree remove {seat.path}: {removed.refusal()}")
    return Removal(seat.runtime_id, seat.path, seat.branch, lost)
