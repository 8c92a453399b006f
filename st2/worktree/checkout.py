"""What a repository and a worktree directory are, read from their files alone (no git process).

A repository is a real directory (never a symlink) holding a ``.git`` directory, or a bare
repository; its *common directory* holds ``worktrees/<name>/`` per linked worktree, whose
``gitdir`` file names ``<worktree>/.git``, whose ``HEAD`` is the worktree's own, whose ``locked``
file (when present) holds the lock's reason, and whose ``rebase-merge``/``rebase-apply`` mark a
rebase in progress. A worktree directory's ``.git`` is a file, ``gitdir: <common>/worktrees/<name>``.

:func:`read_checkout` accepts a directory as the seat's checkout only when both directions agree
(its ``.git`` names an administrative directory of *this* repository, and that directory names
it back), so a ``.git`` file pointing at another repository, or a copy of someone else's
checkout, is refused with its reason rather than reused.
"""

from __future__ import annotations

import os
import stat
from typing import NamedTuple

# git's own names inside a common directory and a worktree's administrative directory.
GIT_DIRECTORY = ".git"
ADMINISTRATIVE = "worktrees"
REBASE_MARKERS = ("rebase-merge", "rebase-apply")
READ_LIMIT = 64 * 1024
LOCK_PREFIX = "st2 seat "


class Repository(NamedTuple):
    path: str      # the repository directory, absolute, as declared (never a symlink)
    common: str    # its git common directory


class Checkout(NamedTuple):
    path: str          # the worktree directory
    administrative: str  # <common>/worktrees/<name>
    head: str          # the worktree's HEAD, stripped
    rebasing: bool
    lock: str | None   # the lock's reason ("" for a lock without one), None when unlocked

    @property
    def branch(self) -> str | None:
        """The branch checked out, or None when HEAD is detached (or not a branch ref)."""
        prefix = "ref: refs/heads/"
        return self.head[len(prefix):] if self.head.startswith(prefix) else None


def expand(declared: str) -> str:
    """A declared ``repo`` or ``path`` as an absolute path on this host (``~`` expanded)."""
    return os.path.normpath(os.path.abspath(os.path.expanduser(declared)))


def worktree_path(worktree, runtime_id: str) -> str:
    """Where the seat ``runtime_id``'s worktree (a :class:`~st2.declarations.model.Worktree`)
    lives on this host: its ``path``, else :func:`st2.runtime.layout.default_worktree`."""
    from st2.runtime import layout

    if worktree.path is not None:
        return expand(worktree.path)
    return layout.default_worktree(expand(worktree.repo), runtime_id)


def lock_reason(runtime_id: str, catalog_digest: str) -> str:
    """The ``git worktree lock`` reason naming the seat that owns a worktree."""
    return f"{LOCK_PREFIX}{runtime_id} catalog {catalog_digest}"


def inside(path: str, directory: str) -> bool:
    """True when ``path`` is ``directory`` or lies under it (both resolved)."""
    return under(os.path.realpath(path), os.path.realpath(directory))


def under(real_path: str, real_directory: str) -> bool:
    """:func:`inside` for paths already resolved (a pass resolves each seat's path once)."""
    return real_path == real_directory or real_path.startswith(real_directory.rstrip("/") + "/")


def repository(declared: str) -> tuple[Repository | None, str | None]:
    """``(repository, None)``, or ``(None, why it is not one)``."""
    path = expand(declared)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None, f"there is no repository at {path}"
    except OSError as error:
        return None, f"cannot inspect {path}: {error.strerror}"
    if stat.S_ISLNK(mode):
        return None, (f"the repository path {path} is a symlink; name the real directory "
                      f"(a link can be re-pointed at another checkout)")
    if not stat.S_ISDIR(mode):
        return None, f"{path} is not a directory"
    dot_git = os.path.join(path, GIT_DIRECTORY)
    try:
        dot_mode = os.lstat(dot_git).st_mode
    except FileNotFoundError:
        if all(os.path.exists(os.path.join(path, name)) for name in ("HEAD", "objects", "refs")):
            return Repository(path, path), None  # a bare repository
        return None, f"{path} is not a git repository (no .git)"
    except OSError as error:
        return None, f"cannot inspect {dot_git}: {error.strerror}"
    if stat.S_ISDIR(dot_mode):
        return Repository(path, dot_git), None
    if stat.S_ISREG(dot_mode):
        return None, (f"{path} is itself a linked worktree or a submodule (its .git is a file), "
                      f"not a repository; name the main checkout")
    return None, f"{dot_git} is neither a directory nor a file"


def _read(path: str) -> str | None:
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return os.read(descriptor, READ_LIMIT).decode("utf-8", "surrogateescape")
    finally:
        os.close(descriptor)


def registered(repository: Repository, path: str) -> str | None:
    """The administrative directory of ``repository`` that registers a worktree at ``path``
    (whether or not the directory still exists), or None."""
    root = os.path.join(repository.common, ADMINISTRATIVE)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return None
    wanted = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    for name in names:
        gitdir = _read(os.path.join(root, name, "gitdir"))
        if gitdir is None:
            continue
        named = os.path.dirname(gitdir.strip())
        if os.path.join(os.path.realpath(os.path.dirname(named)), os.path.basename(named)) == wanted:
            return os.path.join(root, name)
    return None


def read_checkout(repository: Repository, path: str) -> tuple[Checkout | None, str | None]:
    """The checkout at ``path`` (an existing real directory) when it is a linked worktree of
    ``repository`` that names it back; else ``(None, why not)``."""
    dot_git = os.path.join(path, GIT_DIRECTORY)
    text = _read(dot_git)
    if text is None:
        if os.path.isdir(dot_git) and not os.path.islink(dot_git):
            return None, f"{path} is a repository of its own, not a worktree of {repository.path}"
        if not os.listdir(path):
            return None, f"{path} exists and is empty, but is not a worktree of {repository.path}"
        return None, f"{path} exists and is not a git worktree (no .git file)"
    line = text.strip()
    if not line.startswith("gitdir:"):
        return None, f"{dot_git} is not a worktree's .git file"
    administrative = line[len("gitdir:"):].strip()
    if not os.path.isabs(administrative):
        administrative = os.path.join(path, administrative)
    root = os.path.realpath(os.path.join(repository.common, ADMINISTRATIVE))
    if os.path.dirname(os.path.realpath(administrative)) != root:
        return None, (f"{dot_git} points at {administrative}, not at a worktree of {repository.path}: "
                      f"another repository's checkout")
    back = _read(os.path.join(administrative, "gitdir"))
    if back is None or os.path.realpath(os.path.dirname(back.strip())) != os.path.realpath(path):
        return None, f"{repository.path} does not register {path} as its worktree ({administrative} names another)"
    head = _read(os.path.join(administrative, "HEAD"))
    if head is None:
        return None, f"{administrative}/HEAD is unreadable"
    rebasing = any(os.path.exists(os.path.join(administrative, marker)) for marker in REBASE_MARKERS)
    lock = _read(os.path.join(administrative, "locked"))
    return Checkout(path, administrative, head.strip(), rebasing, None if lock is None else lock.strip()), None
