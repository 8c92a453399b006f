"""Helpers for the worktree tier: real git in a repository, a worktree seat's body, the worktree list, a tree's bytes."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


GIT_IDENTITY = {"GIT_AUTHOR_NAME": "st2 test", "GIT_AUTHOR_EMAIL": "test@st2.invalid",
                "GIT_COMMITTER_NAME": "st2 test", "GIT_COMMITTER_EMAIL": "test@st2.invalid"}


def git(directory: Path, *arguments: str, check: bool = True) -> subprocess.CompletedProcess:
    """Real git in ``directory`` with a fixed identity and no user configuration."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_IDENTITY, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    return subprocess.run(["git", "-C", str(directory), *arguments], capture_output=True, text=True,
                          check=check, env=env)


def make_repository(path: Path) -> Path:
    """A repository on ``main`` with one commit of ``README`` and ``tracked.txt``."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "README").write_text("a repository\n")
    (path / "tracked.txt").write_text("one\n")
    git(path, "add", "README", "tracked.txt")
    git(path, "commit", "-q", "-m", "first")
    return path


def worktree_seat(repo: Path, branch: str, command: str = "exec sleep 600", extra: str = "") -> str:
    """The body of a shell seat with a worktree of ``repo`` on ``branch``."""
    return (f'    argv "sh" "-c" "{command}"\n'
            f'    worktree {{\n        repo "{repo}"\n        branch "{branch}"\n{extra}    }}')


def worktrees(repo: Path) -> dict[str, dict[str, str]]:
    """``git worktree list --porcelain`` of ``repo``: path -> {"branch", "locked", …}."""
    listed: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in git(repo, "worktree", "list", "--porcelain").stdout.splitlines():
        if line.startswith("worktree "):
            current = listed.setdefault(line[len("worktree "):], {})
        elif line:
            key, _, value = line.partition(" ")
            current[key] = value
    return listed


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symlinks as their target text) with its bytes and mode."""
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = Path(directory) / name
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            found[str(path.relative_to(root))] = data + b"|mode=" + oct(path.lstat().st_mode).encode()
    return found
