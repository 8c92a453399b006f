"""Each seat's own worktree under a real ``st2 up``, on real git repositories: made before the
first launch on its own branch, locked for the seat, the seat's workspace, reused by a relaunch,
and shown in the roster."""

from __future__ import annotations

import json
import os
import signal

import pytest

from supervisor_support import poll_for
from worktree_support import git, worktree_seat, worktrees

pytestmark = pytest.mark.process

LAUNCH = "pwd >> launches; exec sleep 600"


def test_two_seats_on_one_repository_get_two_locked_worktrees_and_a_relaunch_reuses_each(fleet, repo):
    for seat in ("a", "b"):
        fleet.seat(seat, worktree_seat(repo, f"seat-{seat}", LAUNCH))
    fleet.up("--interval", "60s")
    paths = {seat: fleet.base / "repo.st2-worktrees" / f"h.{seat}" for seat in ("a", "b")}
    assert poll_for(lambda: all((path / "launches").exists() for path in paths.values()), timeout=20), fleet.log()

    listed = worktrees(repo)
    for seat, path in paths.items():
        entry = listed[str(path)]
        assert entry["branch"] == f"refs/heads/seat-{seat}"
        assert entry["locked"].startswith(f"st2 seat h.{seat} catalog "), entry
        assert (path / "launches").read_text() == f"{path}\n"   # the workspace is the worktree
        assert (path / "tracked.txt").read_text() == "one\n"

    # The agent's work, then a crash: the relaunch runs in the same worktree, which keeps it.
    (paths["a"] / "work.txt").write_text("the agent's work\n")
    first = fleet.record("h.a").pid
    os.kill(first, signal.SIGKILL)
    assert poll_for(lambda: (paths["a"] / "launches").read_text().count("\n") == 2, timeout=20), fleet.log()
    assert (paths["a"] / "launches").read_text() == f"{paths['a']}\n" * 2
    assert (paths["a"] / "work.txt").read_text() == "the agent's work\n"
    assert fleet.log().count("created worktree") == 2, fleet.log()   # once per seat, never again
    assert worktrees(repo)[str(paths["a"])]["branch"] == "refs/heads/seat-a"

    # The roster's field, before the delivery hold: a file created at the top counts as dirty.
    def row():
        rows = json.loads(fleet.st2("agents", "--json").stdout)
        found = next(r for r in rows if r["identity"] == "h.a")
        return found if found["worktree"]["dirty"] == 2 else None

    git(paths["a"], "add", "work.txt")   # the index changed: the next pass re-reads the worktree
    fleet.seat("a", worktree_seat(repo, "seat-a", LAUNCH) + "\n    name \"A\"")   # wakes a pass
    found = poll_for(row, timeout=20)
    assert found, fleet.log()
    # the presence hold was appended after it, then the accounts' two fields
    assert list(found)[-4:] == ["worktree", "deliveryHold", "account", "budgetHold"]
    worktree = found["worktree"]
    assert {key: worktree[key] for key in ("path", "branch", "state", "reason", "dirty", "ahead", "behind")} == {
        "path": str(paths["a"]), "branch": "seat-a", "state": "ready", "reason": None, "dirty": 2,
        "ahead": None, "behind": None}
    assert worktree["lastCommitAgeMs"] >= 0

    # A running seat's worktree is never removed, forced or not.
    for flags in ((), ("--force",)):
        refused = fleet.st2("agent", "worktree", "rm", "a", *flags)
        assert refused.returncode == 1 and "[seat-running] a launch record remains for h.a" in refused.stderr
    assert (paths["a"] / "work.txt").read_text() == "the agent's work\n"
