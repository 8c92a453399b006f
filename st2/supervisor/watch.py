"""Mutation-only filesystem wake-ups for the supervisor.

inotify watches (:class:`st2.fs.watch.MutationWatch`) carry the mutation mask only — create, modify/close-write,
rename and delete — never access or open, so the supervisor's own reads of its catalog cannot
produce an event, let alone a pass. Watched: the catalog-generation file (through ``.st2/``),
``catalog.kdl`` (a pass says once what is wrong with it), ``agents/``, this host's seat
directories (for ``agent.kdl``), the runtime scope's unpark requests. (tmux leaves its socket
behind when a server exits, so PTY exits are noticed by the timer; exec exits wake the loop
through SIGCHLD.) Events on other names (presence, harness state, mail)
are read and dropped without a pass. If inotify cannot be set up, :class:`CatalogWatch` stays
inert and the interval timer alone drives the loop.
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.layout import AGENTS_DIR, CATALOG_DECLARATION, CATALOG_GENERATION, CONTROL_DIR, DECLARATION
from st2.catalog.location import CatalogLocation
from st2.fs.watch import ARRIVALS, IGNORED, MutationWatch
from st2.runtime.scope import RuntimeScope



class CatalogWatch:
    def __init__(self, location: CatalogLocation, scope: RuntimeScope) -> None:
        self.location = location
        self.scope = scope
        self.watch = MutationWatch()
        self.error: str | None = None
        if not self.watch.active:
            self.error = f"filesystem watch unavailable ({self.watch.error}); waking on the interval timer only"

    @property
    def active(self) -> bool:
        return self.watch.active

    def fileno(self) -> int:
        return self.watch.fileno()

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
        if not self.watch.active:
            return
        wanted = self.wanted()
        for path, role in wanted.items():
            if self.watch.watching(path) or not path.is_dir():
                continue
            error = self.watch.add(path, role)
            if error is not None and self.error is None and role in ("control", "host"):
                self.error = f"cannot watch {path}: {error}; the interval timer still runs"
        for path in [path for path in self.watch.by_path if path not in wanted]:
            self.watch.remove(path)

    def drain(self) -> bool:
        """Read every pending event; True when one of them should wake a pass."""
        relevant = False
        for role, name, mask in self.watch.events():
            if mask & IGNORED:
                relevant = True
            elif role == "unpark" and not mask & ARRIVALS:
                continue  # the supervisor consuming a request must not wake itself
            elif _relevant(role, name):
                relevant = True
        return relevant


def _relevant(role: str, name: str) -> bool:
    if role == "root":
        return name in (CONTROL_DIR, AGENTS_DIR, CATALOG_DECLARATION)
    if role == "control":
        return name == CATALOG_GENERATION
    if role in ("agents", "host"):
        return not name.startswith(".") or name == ""
    if role == "seat":
        return name == DECLARATION
    if role == "unpark":
        return name.endswith(".json") and not name.startswith(".")
    return False
