"""Before a seat launches: its worktree exists, is its own, and is locked (docs/worktrees.md).

:func:`ensure` is the supervisor's one step. Given the seat's :class:`Target`, it returns an
:class:`Outcome`: ``ready`` (created now, or reused) or ``held`` with the reason, in which case the
seat is not launched and nothing was changed. It creates with the real ``git worktree add --lock``
(``-b <branch> <path> <base>`` for a new branch, ``<path> <branch>`` for an existing one); a
relaunch finds the directory and reuses it after reading its files (:mod:`.checkout`), running
no git at all. The lock's reason names the seat and the catalog, so ``git worktree prune`` run
anywhere never drops it, and a lock of anyone else holds the seat.

Held, never reused: a repository path that is a symlink, a linked worktree, or lies inside
another seat's worktree or the catalog; a worktree path inside the catalog or a symlink; a
directory that is not a worktree of this repository (its ``.git`` pointing elsewhere, or none);
a worktree on another branch, detached, or mid-rebase; a directory deleted while git still
registers it; a branch two seats claim; and everything ``git worktree add`` refuses (the branch
checked out elsewhere) with git's own line.
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

from st2.worktree import checkout
from st2.worktree.git import git

READY = "ready"
HELD = "held"


class Target(NamedTuple):
    runtime_id: str
    repo: str                  # as declared
    branch: str
    base: str | None
    path: str                  # resolved (:func:`st2.worktree.checkout.worktree_path`)
    lock_reason: str
    catalog: str               # the catalog root: nothing of a worktree may lie in it
    others: tuple[str, ...] = ()   # the other seats' worktree paths on this host, resolved
    contested_by: tuple[str, ...] = ()  # other seats of this host claiming the same branch


class Outcome(NamedTuple):
    state: str
    path: str
    reason: str | None = None
    created: bool = False

    @property
    def ready(self) -> bool:
        return self.state == READY


def _held(target: Target, reason: str) -> Outcome:
    return Outcome(HELD, target.path, reason)


def ensure(target: Target) -> Outcome:
    """Create or reuse ``target``'s worktree; see the module docstring. Never raises."""
    if target.contested_by:
        return _held(target, f"branch {target.branch!r} of {checkout.expand(target.repo)} is also claimed by "
                             f"{', '.join(target.contested_by)}")
    repository, refusal = checkout.repository(target.repo)
    if repository is None:
        return _held(target, refusal)
    for what, path in (("the repository", repository.path), ("the worktree", target.path)):
        if checkout.inside(path, target.catalog):
            return _held(target, f"{what} {path} lies inside the catalog, which a replication engine "
                                 f"may carry; keep it outside")
    real_repository = os.path.realpath(repository.path)
    owner = next((other for other in target.others if checkout.under(real_repository, other)), None)
    if owner is not None:
        return _held(target, f"the repository {repository.path} lies inside another seat's worktree {owner}")
    try:
        mode = os.lstat(target.path).st_mode
    except FileNotFoundError:
        return _create(target, repository)
    except OSError as error:
        return _held(target, f"cannot inspect {target.path}: {error.strerror}")
    if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
        return _held(target, f"{target.path} is {'a symlink' if stat.S_ISLNK(mode) else 'not a directory'}, "
                             f"not a worktree st2 made")
    return _reuse(target, repository)


def _reuse(target: Target, repository: checkout.Repository) -> Outcome:
    found, refusal = checkout.read_checkout(repository, target.path)
    if found is None:
        return _held(target, refusal)
    if found.lock is not None and found.lock != target.lock_reason:
        return _held(target, f"{target.path} is locked by someone else ({found.lock or 'no reason given'})")
    if found.rebasing:
        return _held(target, f"{target.path} is in the middle of a rebase; finish or abort it "
                             f"(git -C {target.path} rebase --continue | --abort)")
    if found.branch is None:
        return _held(target, f"{target.path} has a detached HEAD ({found.head[:12]}); check out "
                             f"{target.branch!r} there (git -C {target.path} switch {target.branch})")
    if found.branch != target.branch:
        return _held(target, f"{target.path} has branch {found.branch!r} checked out, not {target.branch!r}")
    if found.lock is None:
        locked = git(repository.path, "worktree", "lock", "--reason", target.lock_reason, target.path)
        if not locked.ok:
            return _held(target, f"cannot lock {target.path}: {locked.refusal()}")
    return Outcome(READY, target.path)


def _create(target: Target, repository: checkout.Repository) -> Outcome:
    registration = checkout.registered(repository, target.path)
    if registration is not None:
        return _held(target, f"the worktree directory {target.path} is gone, but {repository.path} still "
                             f"registers it ({registration}); restore it, or forget it with "
                             f"`st2 agent worktree rm {target.runtime_id} --force` and the next pass makes a new one")
    exists = git(repository.path, "rev-parse", "--verify", "--quiet", f"refs/heads/{target.branch}").ok
    parent = os.path.dirname(target.path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as error:
        return _held(target, f"cannot create {parent}: {error.strerror}")
    lock = ("--lock", "--reason", target.lock_reason)
    # ``--`` before the positionals: a declared base is never read as an option.
    if exists:
        added = git(repository.path, "worktree", "add", *lock, "--", target.path, target.branch)
    else:
        added = git(repository.path, "worktree", "add", *lock, "-b", target.branch, "--", target.path,
                    target.base or "HEAD")
    if not added.ok:
        return _held(target, f"git worktree add {target.branch!r} at {target.path} refused: {added.refusal()}")
    return Outcome(READY, target.path, created=True)
