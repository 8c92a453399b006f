"""Hostile worktree cases through the real CLI (``st2 validate``, ``st2 up --once``, ``st2 agents``,
``st2 agent worktree rm``): each is one clear error or a held seat naming why, never a traceback,
and never a silent reuse of someone else's checkout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from worktree_support import git, make_repository, tree_bytes, worktree_seat, worktrees

pytestmark = pytest.mark.process


def up_once(fleet):
    result = fleet.st2("up", "--once")
    assert "Traceback" not in result.stderr, result.stderr
    return result


def roster_worktree(fleet, seat: str) -> dict | None:
    rows = json.loads(fleet.st2("agents", "--json").stdout)
    return next(row for row in rows if row["identity"] == f"h.{seat}")["worktree"]


def default_path(fleet, seat: str) -> Path:
    return fleet.base / "repo.st2-worktrees" / f"h.{seat}"


def test_a_repository_path_that_is_a_symlink_is_refused(fleet, repo):
    link = fleet.base / "link"
    link.symlink_to(repo)
    fleet.seat("x", worktree_seat(link, "seat-x"))
    validated = fleet.st2("validate")
    assert validated.returncode == 1
    assert (f"agents/h/x/agent.kdl:3:5: error[worktree-repo-invalid]: the repository path {link} is a symlink; "
            "name the real directory") in validated.stdout + validated.stderr
    result = up_once(fleet)
    assert result.returncode == 1 and f"h.x: worktree held, not launching: the repository path {link} is a symlink" in result.stderr
    assert fleet.running() == {} and list(worktrees(repo)) == [str(repo)]
    assert roster_worktree(fleet, "x")["state"] == "held"
    assert (f"advisory: h.x: worktree-held: not launched: its worktree is held: the repository path {link} is a "
            "symlink; name the real directory") in fleet.st2("doctor").stdout


def test_a_repository_inside_another_seats_worktree_is_refused(fleet, repo):
    fleet.seat("a", worktree_seat(repo, "seat-a"))
    assert up_once(fleet).returncode == 0
    nested = make_repository(default_path(fleet, "a") / "sub")
    fleet.seat("b", worktree_seat(nested, "seat-b"))
    validated = fleet.st2("validate")
    assert validated.returncode == 1
    assert (f"agents/h/b/agent.kdl:3:5: error[worktree-repo-in-worktree]: the repository {nested} lies inside "
            "h.a's worktree") in validated.stdout + validated.stderr
    result = up_once(fleet)
    assert f"h.b: worktree held, not launching: the repository {nested} lies inside another seat's worktree" in result.stderr
    assert "h.b" not in fleet.running() and list(worktrees(nested)) == [str(nested)]


def test_a_branch_checked_out_elsewhere_is_git_s_refusal_and_holds_the_seat(fleet, repo):
    fleet.seat("x", worktree_seat(repo, "main"))
    result = up_once(fleet)
    assert result.returncode == 1
    assert (f"h.x: worktree held, not launching: git worktree add 'main' at {default_path(fleet, 'x')} refused: "
            f"fatal: 'main' is already checked out at '{repo}'") in result.stderr
    assert fleet.running() == {} and not default_path(fleet, "x").exists()


def test_two_seats_claiming_one_branch_are_both_held(fleet, repo):
    fleet.seat("a", worktree_seat(repo, "shared"))
    fleet.seat("b", worktree_seat(repo, "shared"))
    validated = fleet.st2("validate")
    assert "error[worktree-branch-claimed]: branch 'shared' of " in validated.stdout + validated.stderr
    result = up_once(fleet)
    assert "h.a: worktree held, not launching: branch 'shared' of" in result.stderr
    assert "is also claimed by h.b" in result.stderr and fleet.running() == {}


@pytest.mark.parametrize("how", ["detached", "rebasing"])
def test_a_detached_or_rebasing_worktree_holds_the_seat(fleet, repo, how):
    fleet.seat("x", worktree_seat(repo, "seat-x"))
    assert up_once(fleet).returncode == 0
    path = default_path(fleet, "x")
    assert fleet.st2("down", "x").returncode == 0
    if how == "detached":
        git(path, "switch", "-q", "--detach")
        expected = "has a detached HEAD"
    else:
        (path / "tracked.txt").write_text("seat\n")
        git(path, "commit", "-q", "-am", "seat change")
        (repo / "tracked.txt").write_text("main\n")
        git(repo, "commit", "-q", "-am", "main change")
        assert git(path, "rebase", "main", check=False).returncode != 0   # a conflict stops it midway
        expected = "is in the middle of a rebase"
    before = tree_bytes(path)
    result = up_once(fleet)
    assert result.returncode == 1 and f"h.x: worktree held, not launching: {path} {expected}" in result.stderr
    assert fleet.running() == {} and tree_bytes(path) == before
    worktree = roster_worktree(fleet, "x")
    assert worktree["state"] == "held" and expected in worktree["reason"]


def test_a_deleted_worktree_directory_holds_the_seat_until_the_verb_forgets_it(fleet, repo):
    fleet.seat("x", worktree_seat(repo, "seat-x"))
    assert up_once(fleet).returncode == 0
    path = default_path(fleet, "x")
    assert fleet.st2("down", "x").returncode == 0
    shutil.rmtree(path)
    result = up_once(fleet)
    assert result.returncode == 1
    assert f"h.x: worktree held, not launching: the worktree directory {path} is gone, but {repo} still registers it" in result.stderr
    assert not path.exists() and fleet.running() == {}
    git(repo, "worktree", "prune")                      # prune elsewhere never drops the locked registration
    assert str(path) in worktrees(repo)
    forgotten = fleet.st2("agent", "worktree", "rm", "x", "--force")
    assert forgotten.returncode == 0, forgotten.stderr
    assert str(path) not in worktrees(repo)
    assert up_once(fleet).returncode == 0
    assert worktrees(repo)[str(path)]["branch"] == "refs/heads/seat-x"   # made anew from the kept branch


def test_a_git_file_pointing_at_another_repository_is_never_reused(fleet, repo):
    other = make_repository(fleet.base / "other")
    git(other, "worktree", "add", "-q", str(fleet.base / "elsewhere"), "-b", "theirs")
    path = default_path(fleet, "x")
    path.mkdir(parents=True)
    (path / ".git").write_text(f"gitdir: {other}/.git/worktrees/elsewhere\n")
    fleet.seat("x", worktree_seat(repo, "seat-x"))
    before = tree_bytes(path)
    result = up_once(fleet)
    assert result.returncode == 1
    assert (f"h.x: worktree held, not launching: {path}/.git points at {other}/.git/worktrees/elsewhere, "
            f"not at a worktree of {repo}: another repository's checkout") in result.stderr
    assert tree_bytes(path) == before and fleet.running() == {} and list(worktrees(repo)) == [str(repo)]
    refused = fleet.st2("agent", "worktree", "rm", "x", "--force")
    assert refused.returncode == 1 and "[not-this-seats-worktree]" in refused.stderr and tree_bytes(path) == before
