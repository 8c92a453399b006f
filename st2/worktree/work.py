"""What a seat's worktree holds that removing it would lose: the seat's work.

Four kinds, each read with real git: uncommitted changes (staged or not, ``git status``),
untracked files other than those st2 itself wrote there (the caller names them: the render
targets of the seat's declaration, such as the Claude driver's ``.claude/settings.local.json``;
git's *ignored* files are not work, as ``git worktree remove`` treats them), stashes made on the
seat's branch (a stash lives in the repository, but its subject names the branch), and commits
reachable from the worktree's HEAD that are on no remote-tracking branch and no other local
branch. A git call that fails is itself reported as work (``unknown``): the verdict fails
closed, so a worktree st2 cannot read is never removed as clean.
"""

from __future__ import annotations

import os
from typing import NamedTuple

from st2.worktree.git import git

SHOWN = 20  # per kind, in lines for an operator; the counts are always whole


class Work(NamedTuple):
    changed: tuple[str, ...] = ()
    untracked: tuple[str, ...] = ()
    stashes: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.changed or self.untracked or self.stashes or self.commits or self.unknown)

    def summary(self) -> str:
        """One clause: ``2 uncommitted changes, 1 untracked file, …`` (``nothing`` when empty)."""
        parts = []
        for count, word in ((len(self.changed), "uncommitted change"), (len(self.untracked), "untracked file"),
                            (len(self.stashes), "stash"), (len(self.commits), "unpushed commit")):
            if count:
                parts.append(f"{count} {word}{'es' if count != 1 and word == 'stash' else 's' if count != 1 else ''}")
        parts.extend(self.unknown)
        return ", ".join(parts) or "nothing"

    def lines(self) -> list[str]:
        """Exactly what would be lost, one item a line (at most :data:`SHOWN` per kind, then a count)."""
        lines = []
        for label, items in (("uncommitted", self.changed), ("untracked", self.untracked), ("stash", self.stashes),
                             ("commit", self.commits), ("unreadable", self.unknown)):
            lines += [f"{label}: {item}" for item in items[:SHOWN]]
            if len(items) > SHOWN:
                lines.append(f"{label}: … and {len(items) - SHOWN} more")
        return lines


def parse_status(output: str) -> tuple[list[str], list[str]]:
    """``(changed, untracked)`` paths from ``git status --porcelain=v1 -z``."""
    changed, untracked = [], []
    entries = output.split("\0")
    index = 0
    while index < len(entries):
        entry = entries[index]
        index += 1
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        elif code != "!!":
            changed.append(path)
            if "R" in code or "C" in code:
                index += 1  # the rename's or copy's source follows
    return changed, untracked


def inspect(path: str, repository: str, branch: str, st2_files: frozenset[str] = frozenset()) -> Work:
    """The work in the worktree at ``path`` of ``repository`` on ``branch``; ``st2_files`` are
    paths relative to the worktree that st2 wrote and that are therefore not the seat's work. A
    directory that no longer exists holds no files; its branch's stashes and commits still count."""
    present = os.path.isdir(path)
    directory = path if present else repository
    unknown: list[str] = []
    changed: list[str] = []
    untracked: list[str] = []
    if present:
        status = git(path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
        if status.ok:
            changed, untracked = parse_status(status.stdout)
            untracked = [name for name in untracked if name not in st2_files]
        else:
            unknown.append(f"git status failed: {status.refusal()}")
    stashes = []
    listed = git(directory, "stash", "list", "--format=%gd%x09%gs")
    if listed.ok:
        for line in listed.stdout.splitlines():
            name, _, subject = line.partition("\t")
            if subject.startswith((f"WIP on {branch}:", f"On {branch}:")):
                stashes.append(f"{name} {subject}")
    else:
        unknown.append(f"git stash list failed: {listed.refusal()}")
    tip = "HEAD" if present else f"refs/heads/{branch}"
    commits = []
    has_tip = git(directory, "rev-parse", "--verify", "--quiet", tip).ok
    if has_tip:
        log = git(directory, "log", "--format=%h %s", tip, "--not", f"--exclude={branch}",
                  "--branches", "--remotes")
        if log.ok:
            commits = [line for line in log.stdout.splitlines() if line]
        else:
            unknown.append(f"git log failed: {log.refusal()}")
    elif present:
        unknown.append(f"{tip} does not resolve in {path}")
    return Work(tuple(changed), tuple(untracked), tuple(stashes), tuple(commits), tuple(unknown))
