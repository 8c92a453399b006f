"""Mutation-only inotify watches: the one primitive behind every st2 wake-up (docs/delivery.md §Scoped wake-ups).

Every watch carries :data:`MUTATION_MASK` — create, modify, close-write, rename (both sides),
delete, and the watched directory's own delete or move — and never access, open or
close-nowrite (:data:`READ_MASK`), so a process's own reads of what it watches can never wake it.
Each watched directory carries a caller-chosen role; :meth:`MutationWatch.events` yields
``(role, name, mask)`` per event and forgets a watch the kernel dropped (its directory went
away), reporting that as ``(role, "", IGNORED)``. If inotify cannot be set up the watch is inert
(:attr:`error` says why) and the caller's timer alone drives its loop.
"""

from __future__ import annotations

from pathlib import Path

try:
    from inotify_simple import INotify, flags
except ImportError:  # pragma: no cover - a declared dependency; inert if missing
    INotify = None
    flags = None

if flags is not None:
    MUTATION_MASK = (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
                     | flags.MOVED_TO | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
    READ_MASK = flags.ACCESS | flags.OPEN | flags.CLOSE_NOWRITE
    IGNORED = flags.IGNORED
    ARRIVALS = flags.CREATE | flags.MOVED_TO | flags.CLOSE_WRITE
else:  # pragma: no cover
    MUTATION_MASK = READ_MASK = IGNORED = ARRIVALS = 0


class MutationWatch:
    """A set of mutation-only directory watches, each with a role."""

    def __init__(self) -> None:
        self.error: str | None = None
        self.roles: dict[int, tuple[str, Path]] = {}
        self.by_path: dict[Path, int] = {}
        try:
            if INotify is None:
                raise OSError("inotify_simple is not installed")
            self.inotify = INotify(nonblocking=True)
        except OSError as error:
            self.inotify = None
            self.error = str(error)

    @property
    def active(self) -> bool:
        return self.inotify is not None

    def fileno(self) -> int:
        return self.inotify.fileno()

    def close(self) -> None:
        """Close the inotify descriptor (every watch with it); the watch is inactive after."""
        if self.inotify is not None:
            self.inotify.close()
            self.inotify = None

    def watching(self, path: Path) -> bool:
        return Path(path) in self.by_path

    def add(self, path: Path, role: str) -> OSError | None:
        """Watch directory ``path`` as ``role`` (no-op when already watched or inert); the
        error when the kernel refuses the watch."""
        path = Path(path)
        if self.inotify is None or path in self.by_path:
            return None
        try:
            descriptor = self.inotify.add_watch(str(path), MUTATION_MASK)
        except OSError as error:
            return error
        self.roles[descriptor] = (role, path)
        self.by_path[path] = descriptor
        return None

    def remove(self, path: Path) -> None:
        descriptor = self.by_path.pop(Path(path), None)
        if descriptor is None:
            return
        self.roles.pop(descriptor, None)
        try:
            self.inotify.rm_watch(descriptor)
        except OSError:
            pass

    def events(self) -> list[tuple[str, str, int]]:
        """Every pending event as ``(role, name, mask)``, without blocking; empty when inert or
        unreadable."""
        if self.inotify is None:
            return []
        try:
            pending = self.inotify.read(timeout=0)
        except OSError:
            return []
        found = []
        for event in pending:
            if event.mask & IGNORED:
                entry = self.roles.pop(event.wd, None)
                if entry is not None:
                    self.by_path.pop(entry[1], None)
                found.append((entry[0] if entry else "", "", IGNORED))
                continue
            role = self.roles.get(event.wd, ("", None))[0]
            found.append((role, event.name, event.mask))
        return found
