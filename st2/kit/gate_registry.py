"""st2's gate registry: the equivalent of gate-sdk's gates.list and gates dir (docs/kit.md §Gate registry; the README's "Gate registry" section states it for users).

* The gates dir is ``${GATE_SDK_GATES_DIR:-checks}``, relative to the repository's top level.
* The registry is ``<gates dir>/gates.list``: one registered member per line, ``<name>`` then
  optional ``tier: <tier>``; ``#`` starts a comment, blank lines are ignored. An absent file
  registers nothing; a file that exists and cannot be read, or a line of another shape, is a
  :class:`RegistryError` (the gate reading it exits 2).
* A member resolves through the battery's order: the gates dir first, then st2's own kit root
  (``st2/kit/checks/`` of the installed package, only where it lies inside the top level), and
  ``<name>.sh`` before ``<name>.gate`` inside each directory. A member resolving nowhere adds
  nothing: resolving it is another check's job.
* The gate library is :mod:`st2.kit.gate_output`, counted only where the package lies inside
  the top level (st2's own repository); elsewhere no staged path can name it.

Paths are returned top-level-relative with ``/`` separators. Standard library only.
"""

from __future__ import annotations

import os

GATES_DIR_DEFAULT = "checks"
REGISTRY_NAME = "gates.list"
_NAME_CHARACTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
KIT_DIR = os.path.dirname(os.path.abspath(__file__))


class RegistryError(Exception):
    """The registry exists and cannot be read, or holds a malformed line (``path:line:col``)."""


def gates_dir(environ) -> str:
    return (environ.get("GATE_SDK_GATES_DIR") or GATES_DIR_DEFAULT).rstrip("/")


def repository_top(cwd: str) -> str | None:
    """The nearest directory at or above ``cwd`` holding a ``.git`` entry (a directory, or the
    file of a linked worktree or submodule): git's top level, found without spawning git on a
    hot path. None outside any repository."""
    directory = os.path.abspath(cwd)
    while True:
        if os.path.lexists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _relative_inside(path: str, toplevel: str) -> str | None:
    top = os.path.realpath(toplevel)
    real = os.path.realpath(path)
    if real != top and real.startswith(top + os.sep):
        return os.path.relpath(real, top).replace(os.sep, "/")
    return None


def members(toplevel: str, environ) -> list[tuple[str, str]]:
    """The registered members as ``(name, tier)`` (tier ``""`` when unstated)."""
    path = os.path.join(toplevel, gates_dir(environ), REGISTRY_NAME)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as error:
        raise RegistryError(f"{path}: cannot be read ({error.__class__.__name__})") from error
    found: list[tuple[str, str]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        column = len(line) - len(line.lstrip()) + 1
        words = line.split()
        name, rest = words[0], words[1:]
        if not set(name) <= _NAME_CHARACTERS:
            raise RegistryError(f"{path}:{number}:{column}: {name!r} is not a gate name ([A-Za-z0-9_.-])")
        tier = ""
        if rest:
            if len(rest) != 2 or rest[0] != "tier:":
                raise RegistryError(f"{path}:{number}:{line.index(rest[0]) + 1}: expected 'tier: <tier>' after the gate name")
            tier = rest[1]
        found.append((name, tier))
    return found


def resolve_member(name: str, toplevel: str, environ) -> str | None:
    """The member's declaration, top-level-relative, or None when it resolves nowhere."""
    directories = [os.path.join(toplevel, gates_dir(environ))]
    if _relative_inside(KIT_DIR, toplevel) is not None:
        directories.append(os.path.join(KIT_DIR, "checks"))
    for directory in directories:
        for suffix in (".sh", ".gate"):
            candidate = os.path.join(directory, name + suffix)
            if os.path.isfile(candidate):
                return _relative_inside(candidate, toplevel)
    return None


def library(toplevel: str) -> str | None:
    return _relative_inside(os.path.join(KIT_DIR, "gate_output.py"), toplevel)


def registered_gate_files(toplevel: str, environ) -> list[str]:
    """Every registered member's resolved declaration plus the gate library, sorted, unique."""
    files = {resolve_member(name, toplevel, environ) for name, _ in members(toplevel, environ)}
    files.add(library(toplevel))
    files.discard(None)
    return sorted(files)
