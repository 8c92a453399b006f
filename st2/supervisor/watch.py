"""Mutation-only filesystem wake-ups for the supervisor.

inotify watches (:class:`st2.fs.watch.MutationWatch`) carry the mutation mask only — create, modify/close-write,
rename and delete — never access or open, so the supervisor's own reads of its catalog cannot
produce an event, let alone a pass. Watched: the catalog-generation file (through ``.st2/``),
``catalog.kdl`` (a pass says once what is wrong with it), ``agents/``, this host's seat
directories (for ``agent.kdl``), the runtime scope's unpark requests. (tmux leaves its socket
behind when a server exits, so PTY exits are noticed by the timer; exec exits wake the loop
through SIGCHLD.) Events on other names (presence, harness state, mail)
are read and dropped without a pass. The catalog-generation and declaration watches are two
inotify instances, so either failing leaves the other; if neither can be set up the interval timer
alone drives the loop.
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.layout import AGENTS_DIR, CATALOG_DECLARATION, CATALOG_GENERATION, CONTROL_DIR, DECLARATION
from st2.catalog.location import CatalogLocation
from st2.fs.watch import ARRIVALS, IGNORED, MutationWatch
from st2.runtime.scope import RuntimeScope



class CatalogWatch:
    """Two independent watch channels, each its own inotify instance: the catalog-generation
    channel (the catalog root for ``catalog.kdl`` and ``.st2/``, and ``.st2/catalog-generation``)
    and the declaration channel (``agents/``, this host's seat directories for ``agent.kdl``, and
    the unpark requests). Either failing to set up, or to watch a directory, leaves the other
    channel and the interval timer working; :attr:`error` says what was lost."""

    CHANNELS = ("generation", "declarations")

    def __init__(self, location: CatalogLocation, scope: RuntimeScope) -> None:
        self.location = location
        self.scope = scope
        self.channels = {name: MutationWatch() for name in self.CHANNELS}
        self.error: str | None = None
        lost = [f"{name} ({watch.error})" for name, watch in self.channels.items() if not watch.active]
        if len(lost) == len(self.channels):
            self.error = f"filesystem watch unavailable ({self.channels['generation'].error}); waking on the interval timer only"
        elif lost:
            self.error = f"filesystem watch for {lost[0]} unavailable; the other channel and the interval timer still run"

    @property
    def active(self) -> bool:
        return any(watch.active for watch in self.channels.values())

    def descriptors(self) -> list[int]:
        """The descriptor of every channel that is set up."""
        return [watch.fileno() for watch in self.channels.values() if watch.active]

    def wanted(self) -> dict[str, dict[Path, str]]:
        """Channel -> (directory -> role) for every directory that should carry a watch now."""
        root = self.location.root
        host_directory = root / AGENTS_DIR / self.location.host
        declarations = {
            root: "root",
            root / AGENTS_DIR: "agents",
            host_directory: "host",
            self.scope.unpark_requests: "unpark",
        }
        try:
            for seat in host_directory.iterdir():
                if seat.is_dir() and not seat.name.startswith("."):
                    declarations[seat] = "seat"
        except OSError:
            pass
        return {"generation": {root: "root", root / CONTROL_DIR: "control"}, "declarations": declarations}

    def sync(self) -> None:
        """Add watches for directories that appeared, forget ones that went away."""
        for channel, wanted in self.wanted().items():
            watch = self.channels[channel]
            if not watch.active:
                continue
            for path, role in wanted.items():
                if watch.watching(path) or not path.is_dir():
                    continue
                error = watch.add(path, role)
                if error is not None and self.error is None and role in ("control", "host"):
                    self.error = f"cannot watch {path}: {error}; the interval timer still runs"
            for path in [path for path in watch.by_path if path not in wanted]:
                watch.remove(path)

    def drain(self) -> bool:
        """Read every pending event of both channels; True when one of them should wake a pass."""
        relevant = False
        for channel, watch in self.channels.items():
            for role, name, mask in watch.events():
                if mask & IGNORED:
                    relevant = True
                elif role == "unpark" and not mask & ARRIVALS:
                    continue  # the supervisor consuming a request must not wake itself
                elif _relevant(channel, role, name):
                    relevant = True
        return relevant


def _relevant(channel: str, role: str, name: str) -> bool:
    if role == "root":
        return name in ((CONTROL_DIR, CATALOG_DECLARATION) if channel == "generation" else (AGENTS_DIR,))
    if role == "control":
        return name == CATALOG_GENERATION
    if role in ("agents", "host"):
        return not name.startswith(".") or name == ""
    if role == "seat":
        return name == DECLARATION
    if role == "unpark":
        return name.endswith(".json") and not name.startswith(".")
    return False
