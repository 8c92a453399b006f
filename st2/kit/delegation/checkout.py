"""Where the scratch dir and the stop log live, seen from a linked git worktree.

A worktree-isolated dispatch runs in a linked worktree, but its launch records and its capture
lines belong to the main checkout: the shared record set is the subject, and a relative scratch
dir or log path read from a linked worktree resolves against the main checkout (an absolute one
is read as given). The main checkout is derived the way ``git rev-parse --git-common-dir`` does,
from the worktree's ``.git`` file and its ``commondir``, without spawning git on the hot path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

TMP_DIR_DEFAULT = ".tmp"
WORKFLOW_DIR_DEFAULT = ".workflow"


def main_checkout_of_linked_worktree(cwd: str) -> str | None:
    """If ``cwd`` is inside a linked worktree, return the main checkout's top-level directory;
    otherwise (a main checkout, a plain repository, a submodule, no repository) return None."""
    from st2.kit.gate_registry import repository_top

    top = repository_top(cwd)
    dot_git = os.path.join(top, ".git") if top is not None else None
    if dot_git is None or not os.path.isfile(dot_git):
        return None
    return _main_from_gitdir_file(top, dot_git)


def _main_from_gitdir_file(top: str, dot_git: str) -> str | None:
    try:
        with open(dot_git, encoding="utf-8") as handle:
            first = handle.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = first[len("gitdir:"):].strip()
    if not os.path.isabs(git_dir):
        git_dir = os.path.join(top, git_dir)
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = handle.readline().strip()
    except OSError:
        return None  # a submodule's gitdir has no commondir: not a linked worktree
    if not os.path.isabs(common):
        common = os.path.join(git_dir, common)
    common = os.path.normpath(common)
    if os.path.basename(common) != ".git":
        return None  # the main repository is bare: there is no main checkout to resolve against
    return os.path.dirname(common)


def resolve(path: str, cwd: str) -> str:
    """Resolve a configured path: absolute as given; relative against the main checkout from a
    linked worktree; relative (left as given, read from ``cwd``) otherwise."""
    if os.path.isabs(path):
        return path
    main = main_checkout_of_linked_worktree(cwd)
    if main is None:
        return path
    return os.path.join(main, path)


def scratch_dir(environ: Mapping[str, str], cwd: str) -> str:
    """``${GATE_SDK_TMP_DIR:-.tmp}``, resolved by :func:`resolve`."""
    return resolve(environ.get("GATE_SDK_TMP_DIR") or TMP_DIR_DEFAULT, cwd)
