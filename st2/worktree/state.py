"""The worktree-state record: a seat's worktree as its supervisor last read it, for the roster.

``<runtime scope>/worktree-state/<runtime-id>.json``, host-local (a worktree is), owner-only,
schema ``st2.worktree-state.v1``::

    {"schema":"st2.worktree-state.v1","runtimeId":R,"path":P,"branch":B,"state":"ready"|"held",
     "reason":S|null,"checkedOut":B|null,"dirty":N|null,"ahead":N|null,"behind":N|null,
     "upstream":U|null,"lastCommitMs":ms|null,"observedAtMs":ms}

Why a record and not git per roster read: ``git status`` in a small repository costs the
roster several milliseconds per seat (tens of milliseconds on a large one, and it takes the
index lock unless told not to), so a 600-seat ``st2 agents`` would spend seconds in git. The
supervisor already visits every seat each pass; it re-reads a worktree only when the files git
changes on every commit, checkout, stage or fetch (``HEAD``, ``index``, ``logs/HEAD`` of the
worktree, the repository's ``packed-refs`` and ``FETCH_HEAD``) or the worktree's top directory
(a file created or deleted there) changed since its last reading, or
the reading is older than :data:`REFRESH_MS` (an edit of a tracked file without ``git add`` is
seen then). The roster pays one small file read per seat that declares a worktree, and nothing
for any other seat (benchmarks/worktrees.py).

:func:`read` is pure (bytes in, never raises): anything but this schema for this seat reads as
None. :func:`observe` runs git; :func:`write` publishes atomically.
"""

from __future__ import annotations

import json
import os
from typing import NamedTuple

from st2.records import decoding

SCHEMA = "st2.worktree-state.v1"
REFRESH_MS = 300_000
STATES = ("ready", "held")


class WorktreeState(NamedTuple):
    runtime_id: str
    path: str
    branch: str
    state: str
    reason: str | None = None
    checked_out: str | None = None
    dirty: int | None = None
    ahead: int | None = None
    behind: int | None = None
    upstream: str | None = None
    last_commit_ms: int | None = None
    observed_at_ms: int = 0

    def to_json(self) -> bytes:
        body = {"schema": SCHEMA, "runtimeId": self.runtime_id, "path": self.path, "branch": self.branch,
                "state": self.state, "reason": self.reason, "checkedOut": self.checked_out, "dirty": self.dirty,
                "ahead": self.ahead, "behind": self.behind, "upstream": self.upstream,
                "lastCommitMs": self.last_commit_ms, "observedAtMs": self.observed_at_ms}
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def read(data: bytes | None, runtime_id: str) -> WorktreeState | None:
    """The record in ``data`` when it is this schema for ``runtime_id``; else None."""
    if not data:
        return None
    try:
        body = decoding.load_object(data)
        if body.get("schema") != SCHEMA or body.get("runtimeId") != runtime_id:
            return None
        state = decoding.string(body, "state")
        if state not in STATES:
            return None
        return WorktreeState(
            runtime_id=runtime_id, path=decoding.string(body, "path"), branch=decoding.string(body, "branch"),
            state=state, reason=decoding.optional_string(body, "reason"),
            checked_out=decoding.optional_string(body, "checkedOut"), dirty=decoding.optional_unsigned(body, "dirty"),
            ahead=decoding.optional_unsigned(body, "ahead"), behind=decoding.optional_unsigned(body, "behind"),
            upstream=decoding.optional_string(body, "upstream"),
            last_commit_ms=decoding.optional_unsigned(body, "lastCommitMs"),
            observed_at_ms=decoding.optional_unsigned(body, "observedAtMs") or 0)
    except decoding.Malformed:
        return None


class Reading(NamedTuple):
    """The roster's typed reading: the record and its last commit's age at the read."""

    record: WorktreeState
    last_commit_age_ms: int | None


def reading(record: WorktreeState | None, now_ms: int) -> Reading | None:
    if record is None:
        return None
    age = None if record.last_commit_ms is None else max(0, now_ms - record.last_commit_ms)
    return Reading(record, age)


def to_wire(value: Reading | None) -> dict | None:
    """The roster's ``worktree`` object (None: no worktree declared, or no record on this host)."""
    if value is None:
        return None
    record = value.record
    return {"path": record.path, "branch": record.branch, "state": record.state, "reason": record.reason,
            "checkedOut": record.checked_out, "dirty": record.dirty, "ahead": record.ahead, "behind": record.behind,
            "upstream": record.upstream, "lastCommitAgeMs": value.last_commit_age_ms,
            "observedAtMs": record.observed_at_ms}


def signature(path: str, repository_common: str | None) -> tuple:
    """The stat stamps of the files git rewrites on every commit, checkout, stage and fetch."""
    from st2.worktree.checkout import GIT_DIRECTORY

    stamps = []
    administrative = None
    try:
        with open(os.path.join(path, GIT_DIRECTORY), "rb") as handle:
            line = handle.read(4096).decode("utf-8", "surrogateescape").strip()
        if line.startswith("gitdir:"):
            administrative = line[len("gitdir:"):].strip()
    except OSError:
        pass
    names = [path] + ([os.path.join(administrative, name) for name in ("HEAD", "index", os.path.join("logs", "HEAD"))]
                      if administrative else [])
    if repository_common:
        names += [os.path.join(repository_common, name) for name in ("packed-refs", "FETCH_HEAD")]
    for name in names:
        try:
            status = os.stat(name)
            stamps.append((status.st_mtime_ns, status.st_size, status.st_ino))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


def observe(runtime_id: str, path: str, branch: str, now_ms: int,
            st2_files: frozenset[str] = frozenset()) -> WorktreeState:
    """A ready worktree's reading: the branch checked out, dirty entries (untracked files st2
    wrote excluded), ahead/behind its upstream (None without one), its last commit's time."""
    from st2.worktree.git import git

    status = git(path, "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal")
    checked_out = upstream = None
    ahead = behind = dirty = None
    if status.ok:
        dirty = 0
        for entry in status.stdout.split("\0"):
            if entry.startswith("# branch.head "):
                head = entry[len("# branch.head "):]
                checked_out = None if head == "(detached)" else head
            elif entry.startswith("# branch.upstream "):
                upstream = entry[len("# branch.upstream "):]
            elif entry.startswith("# branch.ab "):
                plus, minus = entry[len("# branch.ab "):].split()
                ahead, behind = int(plus.lstrip("+")), int(minus.lstrip("-"))
            elif entry.startswith("? "):
                dirty += entry[2:] not in st2_files
            elif entry[:2] in ("1 ", "2 ", "u "):
                dirty += 1
    last = git(path, "log", "-1", "--format=%ct", "HEAD")
    last_commit_ms = int(last.stdout.strip()) * 1000 if last.ok and last.stdout.strip().isdigit() else None
    return WorktreeState(runtime_id, path, branch, "ready", None, checked_out, dirty, ahead, behind, upstream,
                         last_commit_ms, now_ms)


def write(scope_directory, state: WorktreeState) -> None:
    """Publish ``state`` atomically in the scope (owner-only)."""
    from st2.fs.atomic import ensure_directory, publish
    from st2.runtime import layout

    target = layout.worktree_state(scope_directory, state.runtime_id)
    ensure_directory(target.parent, mode=0o700)
    publish(target, state.to_json(), layout.staging(scope_directory), root=scope_directory, mode=0o600)


def load(scope_directory, runtime_id: str) -> WorktreeState | None:
    """The record of ``runtime_id`` in the scope, or None (read bounded, never following a link)."""
    from st2.fs.read import RECORD_LIMIT, read_bounded
    from st2.runtime import layout

    try:
        data = read_bounded(layout.worktree_state(scope_directory, runtime_id), RECORD_LIMIT, follow_symlinks=False)
    except OSError:
        return None
    return read(data, runtime_id)
