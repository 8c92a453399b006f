"""Two hosts, ``a`` and ``b``, each with its own copy of one catalog, its own runtime state and
its own `st2 up --host <name>`, kept in step by two real Syncthing instances on loopback
(syncthing_pair.py) configured with st2's own sync rules: each copy's ``.stignore`` is the
output of ``st2 catalog sync-rules --format syncthing [--with-declarations]``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from support import poll_for, run_st2  # noqa: F401 (poll_for re-exported)
from supervisor_support import Fleet
from syncthing_pair import SyncthingPair

# Paths that must never cross: st2's control plane (staging, locks, ledgers), the supervisor
# locks, exec logs, a seat's non-replicated records, record staging temps.
HOST_LOCAL_PARTS = (".st2", "logs")


def sync_rules(with_declarations: bool) -> str:
    """The ``.stignore`` st2 prints for a Syncthing-carried catalog."""
    arguments = ["catalog", "sync-rules", "--format", "syncthing"]
    if with_declarations:
        arguments.append("--with-declarations")
    result = run_st2(*arguments)
    assert result.returncode == 0, result.stderr
    return result.stdout


class TwoHosts:
    """Hosts ``a`` and ``b`` (each a :class:`Fleet` over its own catalog copy) and the Syncthing
    pair carrying the two copies."""

    def __init__(self, base: Path, with_declarations: bool) -> None:
        self.base = base
        self.with_declarations = with_declarations
        self.a = Fleet(base / "a", host="a")
        self.b = Fleet(base / "b", host="b")
        rules = sync_rules(with_declarations)
        for fleet in self.hosts:
            (fleet.catalog / ".stignore").write_text(rules)
        self.sync = SyncthingPair(base)

    @property
    def hosts(self) -> tuple[Fleet, Fleet]:
        return (self.a, self.b)

    def start(self) -> None:
        self.sync.start()
        self.sync.share(self.a.catalog, self.b.catalog)

    def declare(self, identity: str, body: str, host: str = "b") -> None:
        """Declare seat ``<host>.<identity>``: once on ``a`` when the engine carries declarations,
        otherwise on each host separately (as a flake rendering the whole fleet does)."""
        for fleet in ((self.a,) if self.with_declarations else self.hosts):
            fleet.seat(identity, body, host=host)

    def principal(self, identity: str, host: str = "a") -> None:
        """Declare principal ``<host>.<identity>`` the way :meth:`declare` declares a seat."""
        for fleet in ((self.a,) if self.with_declarations else self.hosts):
            directory = fleet.catalog / "principals" / host / identity
            directory.mkdir(parents=True, exist_ok=True)
            temporary = fleet.base / f".{identity}.principal.tmp"
            temporary.write_text(f'principal "{identity}" {{\n}}\n')
            os.replace(temporary, directory / "principal.kdl")

    def cleanup(self) -> None:
        for fleet in self.hosts:
            fleet.cleanup()
        self.sync.stop()


@contextlib.contextmanager
def two_hosts(with_declarations: bool):
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2mh-"))
    hosts = TwoHosts(base, with_declarations)
    try:
        hosts.start()
        yield hosts
    finally:
        hosts.cleanup()
        shutil.rmtree(base, ignore_errors=True)
