"""The run's tree: a shared, no-checkout clone of the top level checked out detached at the
committed HEAD, its origin remote removed, so nothing in it can push here and a foreign commit
is unreachable from this repository's refs by construction. Git is spawned with the GIT_*
location variables removed, so a hook context cannot point it back at this repository.

Standard library only."""

from __future__ import annotations

import os
import shutil
import subprocess

LOCATION_VARIABLES = (
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
)


class CloneError(Exception):
    """A git step failed; the message is one line."""


def clean_environment(environ=None) -> dict[str, str]:
    environ = os.environ if environ is None else environ
    return {name: value for name, value in environ.items() if name not in LOCATION_VARIABLES}


def git(directory: str, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    result = subprocess.run(["git", "-C", directory, *args], capture_output=True,
                            env=env if env is not None else clean_environment(), check=False)
    if check and result.returncode != 0:
        raise CloneError(f"git {args[0]} failed: {result.stderr.decode(errors='replace').strip().splitlines()[-1:] or ['']}"[:300])
    return result.stdout.decode("utf-8", errors="replace")


def toplevel(cwd: str) -> str:
    return git(cwd, "rev-parse", "--show-toplevel").strip()


def make(source: str, tree: str) -> str:
    """Clone ``source``'s committed HEAD into ``tree``; return the base commit."""
    base = git(source, "rev-parse", "--verify", "HEAD").strip()
    result = subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", source, tree],
                            capture_output=True, env=clean_environment(), check=False)
    if result.returncode != 0:
        raise CloneError(f"git clone failed: {result.stderr.decode(errors='replace').strip()}"[:300])
    git(tree, "checkout", "-q", "--detach", base)
    git(tree, "remote", "remove", "origin")
    return base


def refs(tree: str) -> str:
    """Every ref and HEAD, one ``<object> <name>`` line each: what the shape check compares."""
    head = git(tree, "rev-parse", "HEAD", check=False).strip()
    listing = git(tree, "for-each-ref", "--format=%(objectname) %(refname)")
    return f"{head} HEAD\n{listing}"


def dirty(tree: str) -> bool:
    return bool(git(tree, "status", "--porcelain", "--untracked-files=all").strip())


def patch(tree: str, base: str, scratch_index: str) -> bytes:
    """The clone's whole change against ``base``, untracked files included, binary-safe; the
    clone's own index is left as the agent left it (a scratch index takes the staging)."""
    env = clean_environment() | {"GIT_INDEX_FILE": scratch_index}
    try:
        git(tree, "read-tree", base, env=env)
        git(tree, "add", "-A", env=env)
        result = subprocess.run(["git", "-C", tree, "diff", "--cached", "--binary", base], capture_output=True, env=env, check=False)
        if result.returncode != 0:
            raise CloneError(f"git diff failed: {result.stderr.decode(errors='replace').strip()}"[:300])
        return result.stdout
    finally:
        try:
            os.unlink(scratch_index)
        except FileNotFoundError:
            pass


def remove(tree: str) -> None:
    shutil.rmtree(tree, ignore_errors=True)
