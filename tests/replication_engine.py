"""A replication engine imitated between two catalog directories on one machine, doing what
Syncthing, rsync and unison really do to a carried file: it arrives late and in whatever order
the test chooses, is staged under the engine's own temporary name beside its destination and
renamed in, gets the mtime the engine decides (not the writer's), and an old copy can be
restored after the other side deleted it. Only the paths ``st2 catalog sync-rules`` carries are
ever copied: anything else raises, so a test cannot carry a host-local file by mistake."""

from __future__ import annotations

import fnmatch
import os
import shutil
from pathlib import Path

from st2.catalog import sync_rules
from st2.catalog.engine_files import ENGINE_GLOBS

REWRITTEN_MTIME_S = 2_000_000_000.0  # 2033: far from any embedded stamp, in either direction


def carried(relative: str, with_declarations: bool) -> bool:
    """Whether the sync rules carry the catalog-relative ``relative`` (file patterns exactly, a
    tree with everything below it)."""
    files, trees = sync_rules.replicated_paths(with_declarations)
    parts = relative.split("/")
    if any(fnmatch.fnmatchcase(part, glob) for part in parts for glob in ENGINE_GLOBS):
        return False  # every format excludes the engines' own files, even inside a carried tree
    if any(fnmatch.fnmatchcase(relative, pattern) and pattern.count("/") == relative.count("/") for pattern in files):
        return True
    for tree in trees:
        depth = tree.count("/") + 1
        if len(parts) > depth and fnmatch.fnmatchcase("/".join(parts[:depth]), tree):
            return True
    return False


class Engine:
    """Carries files from one catalog copy to another, one explicit step at a time."""

    def __init__(self, with_declarations: bool = False, temporary: str = ".syncthing.{name}.tmp") -> None:
        self.with_declarations = with_declarations
        self.temporary = temporary
        self.snapshots: dict[str, bytes] = {}

    def _check(self, relative: str) -> None:
        if not carried(relative, self.with_declarations):
            raise AssertionError(f"the sync rules do not carry {relative}")

    def copy(self, source: Path, target: Path, relative: str, mtime_s: float = REWRITTEN_MTIME_S) -> None:
        """Carry ``relative`` from catalog ``source`` to catalog ``target`` as an engine does:
        parent directories made, the bytes written under a temporary name beside the
        destination, the engine's mtime set, then renamed over the destination."""
        self._check(relative)
        data = (source / relative).read_bytes()
        self.place(target, relative, data, mtime_s)

    def place(self, target: Path, relative: str, data: bytes, mtime_s: float = REWRITTEN_MTIME_S) -> None:
        self._check(relative)
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        staged = destination.parent / self.temporary.format(name=destination.name)
        staged.write_bytes(data)
        os.utime(staged, (mtime_s, mtime_s))
        os.replace(staged, destination)

    def remember(self, catalog: Path, relative: str) -> None:
        """Keep the bytes of ``relative`` as they are now (an engine's stale replica)."""
        self.snapshots[relative] = (catalog / relative).read_bytes()

    def restore(self, target: Path, relative: str) -> None:
        """Put the remembered old copy of ``relative`` back (a late or restored replica)."""
        self.place(target, relative, self.snapshots[relative])

    def delete(self, target: Path, relative: str) -> None:
        """Carry a deletion."""
        self._check(relative)
        try:
            os.unlink(target / relative)
        except FileNotFoundError:
            pass

    def sync_tree(self, source: Path, target: Path) -> list[str]:
        """Carry every carried file of ``source`` that ``target`` lacks or holds other bytes
        of (a whole convergence pass); return the relative paths carried."""
        moved = []
        for path in sorted(source.rglob("*")):
            relative = str(path.relative_to(source))
            if not path.is_file() or path.is_symlink() or not carried(relative, self.with_declarations):
                continue
            other = target / relative
            if other.is_file() and other.read_bytes() == path.read_bytes():
                continue
            self.copy(source, target, relative)
            moved.append(relative)
        return moved


def clone_declarations(source: Path, target: Path) -> None:
    """The operator's configuration delivering declarations to another host (the flake, or
    ``st2 agent publish`` per host): every ``agent.kdl``, ``principal.kdl`` and ``catalog.kdl``."""
    for path in sorted(source.rglob("*.kdl")):
        relative = path.relative_to(source)
        if relative.parts[0] in ("agents", "principals") or str(relative) == "catalog.kdl":
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / relative)
