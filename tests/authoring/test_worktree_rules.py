"""``st2 validate``'s worktree rules, process-free (the repository judged from its files): each
problem one located error at the seat's ``worktree`` node, only for the selected host's seats."""

from __future__ import annotations

from pathlib import Path

from st2.authoring.validation import validate_catalog


def seat(catalog: Path, host: str, identity: str, repo: Path | str, branch: str, path: str | None = None) -> None:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True)
    extra = f'\n        path "{path}"' if path else ""
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "true"\n    worktree {{\n'
                                         f'        repo "{repo}"\n        branch "{branch}"{extra}\n    }}\n}}\n')


def repository(path: Path) -> Path:
    (path / ".git").mkdir(parents=True)
    return path


def lines(catalog: Path, tmp_path: Path) -> list[str]:
    """Every worktree diagnostic (a long temporary path may add a socket-path one, not judged here)."""
    return [str(diagnostic).splitlines()[0]
            for diagnostic in validate_catalog(catalog, "h", state_dir=tmp_path / "state")
            if diagnostic.code.startswith("worktree-")]


def test_each_host_local_problem_is_one_located_error(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    repo = repository(tmp_path / "repo")
    (tmp_path / "link").symlink_to(repo)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".git").write_text("gitdir: /elsewhere/.git/worktrees/linked\n")
    repository(catalog / "inside")
    seat(catalog, "h", "missing", tmp_path / "nowhere", "a")
    seat(catalog, "h", "symlink", tmp_path / "link", "b")
    seat(catalog, "h", "linked", linked, "c")
    seat(catalog, "h", "incatalog", catalog / "inside", "d")
    seat(catalog, "h", "one", repo, "shared")
    seat(catalog, "h", "two", repo, "shared")
    seat(catalog, "h", "three", repo, "e", path=str(tmp_path / "same"))
    seat(catalog, "h", "four", repo, "f", path=str(tmp_path / "same"))
    seat(catalog, "other", "remote", tmp_path / "nowhere", "shared")   # another host's: not judged here
    assert lines(catalog, tmp_path) == [
        f"agents/h/four/agent.kdl:3:5: error[worktree-path-claimed]: worktree path {tmp_path}/same is claimed by "
        "h.four, h.three",
        f"agents/h/incatalog/agent.kdl:3:5: error[worktree-in-catalog]: the repository {catalog}/inside lies inside "
        "the catalog, which a replication engine may carry",
        f"agents/h/incatalog/agent.kdl:3:5: error[worktree-in-catalog]: the worktree "
        f"{catalog}/inside.st2-worktrees/h.incatalog lies inside the catalog, which a replication engine may carry",
        f"agents/h/linked/agent.kdl:3:5: error[worktree-repo-invalid]: {linked} is itself a linked worktree or a "
        "submodule (its .git is a file), not a repository; name the main checkout",
        f"agents/h/missing/agent.kdl:3:5: error[worktree-repo-invalid]: there is no repository at {tmp_path}/nowhere",
        f"agents/h/one/agent.kdl:3:5: error[worktree-branch-claimed]: branch 'shared' of {repo} is claimed by h.one, h.two",
        f"agents/h/symlink/agent.kdl:3:5: error[worktree-repo-invalid]: the repository path {tmp_path}/link is a "
        "symlink; name the real directory (a link can be re-pointed at another checkout)",
        f"agents/h/three/agent.kdl:3:5: error[worktree-path-claimed]: worktree path {tmp_path}/same is claimed by "
        "h.four, h.three",
        f"agents/h/two/agent.kdl:3:5: error[worktree-branch-claimed]: branch 'shared' of {repo} is claimed by h.one, h.two",
    ]


def test_a_sound_worktree_validates_clean(tmp_path: Path) -> None:
    catalog = tmp_path / "catalog"
    repo = repository(tmp_path / "repo")
    seat(catalog, "h", "one", repo, "seat-one")
    seat(catalog, "h", "two", repo, "seat-two")
    assert lines(catalog, tmp_path) == []
