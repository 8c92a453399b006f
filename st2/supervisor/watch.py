"""Mutation-only filesystem wake-ups for the supervisor.

inotify watches are installed with :data:`MUTATION_MASK` only — create, modify/close-write,
rename and delete — never access or open, so the supervisor's own reads of its catalog cannot
produce an event, let alone a pass. Watched: the catalog-generation file (through ``.st2/``),
``agents/``, this host's seat directories (for ``agent.kdl``), the runtime scope's unpark
requests. (tmux leaves its socket behind when a server exits, so PTY exits are noticed by the
timer; exec exits wake the loop through SIGCHLD.) Events on other names (presence, harness state, mail)
are read and dropped without a pass. If inotify cannot be set up, :class:`CatalogWatch` stays
inert and the interval timer alone drives the loop.
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.layout import AGENTS_DIR, CATALOG_GENERATION, CONTROL_DIR, DECLARATION
from st2.catalog.location import CatalogLocation
from st2.runtime.scope import RuntimeScope

try:
    from inotify_simple import INotify, flags
except ImportError:  # pragma: no cover - a declared dependency; kept inert if missing
    INotify = None
    flags = None

if flags is not None:
    MUTATION_MASK = (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
                     | flags.MOVED_TO | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
    READ_MASK = flags.ACCESS | flags.OPEN | flags.CLOSE_NOWRITE
else:  # pragma: no cover
    MUTATION_MASK = READ_MASK = 0


class CatalogWatch:
    def __init__(self, location: CatalogLocation, scope: RuntimeScope) -> None:
        self.location = location
        self.scope = scope
        self.error: str | None = None
        self.watches: dict[int, tuple[str, Path]] = {}
        self.by_path: dict[Path, int] = {}
        try:
            if INotify is None:
                raise OSError("inotify_simple is not installed")
            self.inotify = INotify(nonblocking=True)
        except OSError as error:
            self.inotify = None
            self.error = f"filesystem watch unavailable ({error}); waking on the interval timer only"

    @property
    def active(self) -> bool:
        return self.inotify is not None

    def fileno(self) -> int:
        return self.inotify.fileno()

    def wanted(self) -> dict[Path, str]:
        """Directory -> role for every directory that should carry a watch now."""
        root = self.location.root
        host_directory = root / AGENTS_DIR / self.location.host
        wanted = {
            root: "root",
            root / CONTROL_DIR: "control",
            root / AGENTS_DIR: "agents",
            host_directory: "host",
            self.scope.unpark_requests: "unpark",
        }
        try:
            for seat in host_directory.iterdir():
                if seat.is_dir() and not seat.name.startswith("."):
                    wanted[seat] = "seat"
        except OSError:
            pass
        return wanted

    def sync(self) -> None:
        """Add watches for directories that appeared, forget ones that went away."""
        if self.inotify is None:
            return
        wanted = self.wanted()
        for path, role in wanted.items():
            if path in self.by_path or not path.is_dir():
                continue
            try:
                descriptor = self.inotify.add_watch(str(path), MUTATION_MASK)
            except OSError as error:
                if self.error is None and role in ("control", "host"):
                    self.error = f"cannot watch {path}: {error}; the interval timer still runs"
                continue
            self.watches[descriptor] = (role, path)
            self.by_path[path] = descriptor
        for path in [path for path in self.by_path if path not in wanted]:
            descriptor = self.by_path.pop(path)
            self.watches.pop(descriptor, None)
            try:
                self.inotify.rm_watch(descriptor)
            except OSError:
                pass

    def drain(self) -> bool:
        """Read every pending event; True when one of them should wake a pass."""
        if self.inotify is None:
            return False
        relevant = False
        try:
            events = self.inotify.read(timeout=0)
        except OSError:
            return False
        for event in events:
            if event.mask & flags.IGNORED:
                entry = self.watches.pop(event.wd, None)
                if entry is not None:
                    self.by_path.pop(entry[1], None)
                relevant = True
                continue
            role = self.watches.get(event.wd, ("", None))[0]
            if role == "unpark" and not event.mask & (flags.CREATE | flags.MOVED_TO | flags.CLOSE_WRITE):
                continue  # the supervisor consuming a request must not wake itself
            if _relevant(role, event.name):
                relevant = True
        return relevant


def _relevant(role: str, name: str) -> bool:
    if role == "root":
        return name in (CONTROL_DIR, AGENTS_DIR)
    if role == "control":
        return name == CATALOG_GENERATION
    if role in ("agents", "host"):
        return not name.startswith(".") or name == ""
    if role == "seat":
        return name == DECLARATION
    if role == "unpark":
        return name.endswith(".json") and not name.startswith(".")
    return False
