"""Retirement, ``st2 catalog archive`` and the supervisor's auto-archive never remove a worktree;
one holding the seat's work keeps every byte, is named in the archive's output, and holds back
auto-archive with a Doctor advisory listing what would be lost; ``st2 agent worktree rm`` alone
removes a worktree, a dirty one only with ``--force`` after printing what goes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supervisor_support import poll_for
from worktree_support import git, tree_bytes, worktree_seat, worktrees

pytestmark = pytest.mark.process


def launch(fleet, repo: Path, seat: str, branch: str) -> Path:
    fleet.seat(seat, worktree_seat(repo, branch))
    result = fleet.st2("up", "--once")
    assert result.returncode == 0, result.stderr
    path = fleet.base / "repo.st2-worktrees" / f"h.{seat}"
    assert worktrees(repo)[str(path)]["branch"] == f"refs/heads/{branch}"
    return path


def retire(fleet, seat: str) -> None:
    assert fleet.st2("agent", "desired-state", seat, "retired", "--reason", "done").returncode == 0
    result = fleet.st2("up", "--once")
    assert result.returncode == 0, result.stderr
    assert not any(runtime_id.startswith(f"h.{seat}") for runtime_id in fleet.running())


def make_work(path: Path) -> None:
    """Each kind of the seat's work: a staged and an unstaged change, an untracked file, a stash
    on the seat's branch and a commit on no remote and no other branch."""
    (path / "committed.txt").write_text("only on this branch\n")
    git(path, "add", "committed.txt")
    git(path, "commit", "-q", "-m", "unpushed work")
    (path / "tracked.txt").write_text("stashed\n")
    git(path, "stash", "push", "-q", "-m", "saved for later")
    (path / "tracked.txt").write_text("changed, not staged\n")
    (path / "README").write_text("changed and staged\n")
    git(path, "add", "README")
    (path / "notes.md").write_text("untracked\n")


def test_retire_and_archive_keep_a_dirty_worktree_byte_identical_and_rm_needs_force(fleet, repo):
    path = launch(fleet, repo, "x", "seat-x")
    make_work(path)
    before = tree_bytes(path)
    retire(fleet, "x")
    assert tree_bytes(path) == before

    archived = fleet.st2("catalog", "archive", "--identity", "x", "--json")
    assert archived.returncode == 0, archived.stderr
    entry = json.loads(archived.stdout)["archived"][0]
    assert list(entry)[-1] == "worktree" and entry["worktree"]["path"] == str(path)
    assert entry["worktree"]["kept"] is True
    assert entry["worktree"]["work"] == ["uncommitted: README", "uncommitted: tracked.txt", "untracked: notes.md",
                                         "stash: stash@{0} On seat-x: saved for later", entry["worktree"]["work"][4]]
    assert entry["worktree"]["work"][4].endswith(" unpushed work") and entry["worktree"]["work"][4].startswith("commit: ")
    assert tree_bytes(path) == before and worktrees(repo)[str(path)]["locked"].startswith("st2 seat h.x ")

    refused = fleet.st2("agent", "worktree", "rm", "x")
    assert refused.returncode == 1 and "[worktree-holds-work]" in refused.stderr and "notes.md" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert tree_bytes(path) == before

    forced = fleet.st2("agent", "worktree", "rm", "x", "--force")
    assert forced.returncode == 0, forced.stderr
    lines = forced.stdout.splitlines()
    assert lines[:5] == ["will be lost: uncommitted: README", "will be lost: uncommitted: tracked.txt",
                         "will be lost: untracked: notes.md", "will be lost: stash: stash@{0} On seat-x: saved for later",
                         lines[4]]
    assert lines[5] == f"removed the worktree {path} of h.x (branch seat-x kept)"
    assert not path.exists() and str(path) not in worktrees(repo)
    assert git(repo, "rev-parse", "--verify", "refs/heads/seat-x").returncode == 0


def test_a_clean_worktree_is_kept_by_archival_and_removed_only_by_the_verb(fleet, repo):
    fleet.seat("y", worktree_seat(repo, "seat-y") + '\n    render { file ".st2-rendered" "by st2" }')
    assert fleet.st2("up", "--once").returncode == 0
    path = fleet.base / "repo.st2-worktrees" / "h.y"
    assert (path / ".st2-rendered").read_text() == "by st2"   # st2's own file: not the seat's work
    retire(fleet, "y")
    archived = fleet.st2("catalog", "archive", "--identity", "y")
    assert archived.returncode == 0, archived.stderr
    assert archived.stdout == (f"archived h.y -> .st2/archive/h/y (worktree {path} kept, clean; "
                               "`st2 agent worktree rm h.y` removes it)\n")
    assert path.is_dir() and str(path) in worktrees(repo)
    removed = fleet.st2("agent", "worktree", "rm", "y")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout == f"removed the worktree {path} of h.y (branch seat-y kept)\n"
    assert not path.exists() and str(path) not in worktrees(repo)


def test_auto_archive_skips_a_seat_whose_worktree_holds_work_and_doctor_lists_it(fleet, repo):
    (fleet.catalog / "catalog.kdl").write_text('catalog {\n    archive-after "1s"\n}\n')
    dirty = launch(fleet, repo, "dirty", "seat-dirty")
    clean = launch(fleet, repo, "clean", "seat-clean")
    (dirty / "notes.md").write_text("untracked\n")
    before = tree_bytes(dirty)
    for seat in ("dirty", "clean"):
        retire(fleet, seat)

    def archived_clean():
        result = fleet.st2("up", "--once")
        return result.stderr if "archived h.clean" in result.stderr else None

    log = poll_for(archived_clean, timeout=20)
    assert log, "the clean seat was never auto-archived"
    assert (f"not archived: h.dirty [worktree-holds-work] its worktree {dirty} holds the seat's work "
            "(1 untracked file): untracked: notes.md") in log
    assert (fleet.catalog / "agents" / "h" / "dirty").is_dir() and clean.is_dir() and tree_bytes(dirty) == before
    doctor = fleet.st2("doctor")
    assert (f"advisory: h.dirty: worktree-holds-work: retired past archive-after but not archived: its worktree "
            f"{dirty} holds the seat's work (1 untracked file): untracked: notes.md") in doctor.stdout.splitlines()
