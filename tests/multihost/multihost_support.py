"""Two hosts, ``a`` and ``b``, each with its own copy of one catalog, its own runtime state and
its own `st2 up --host <name>`, kept in step by two real Syncthing instances on loopback
(syncthing_pair.py) configured with st2's own sync rules: each copy's ``.stignore`` is the
output of ``st2 catalog sync-rules --format syncthing [--with-declarations]``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

from st2.base.clock import FakeClock
from st2.records import harness_context, harness_state, status
from support import poll_for, run_st2  # noqa: F401 (poll_for, run_st2 re-exported)
from supervisor_support import Fleet
from syncthing_pair import SyncthingPair

def host_local(path: str) -> bool:
    """Whether the catalog-relative ``path`` is one that must never cross hosts, by its shape
    (independent of the sync rules under test): st2's control plane ``.st2/`` (staging, sent
    ledgers, scope markers), a supervisor lock ``.st2.<host>.lock``, the exec logs ``logs/``, any
    lock or staged temp, a staging directory, a seat's ``driver-diagnostic``."""
    parts = path.split("/")
    if parts[0] == "logs" or any(part == ".st2" or part.startswith(".st2.") for part in parts):
        return True
    name = parts[-1]
    return (name.endswith((".lock", ".tmp")) or any(part.endswith("-staging") for part in parts)
            or name == "driver-diagnostic")


def sync_rules(with_declarations: bool) -> str:
    """The ``.stignore`` st2 prints for a Syncthing-carried catalog."""
    arguments = ["catalog", "sync-rules", "--format", "syncthing"]
    if with_declarations:
        arguments.append("--with-declarations")
    result = run_st2(*arguments)
    assert result.returncode == 0, result.stderr
    return result.stdout


def write_records(seat_dir, agent: str, at_ms: int) -> None:
    """Publish presence (busy), harness-state (idle) and harness-context (42%) for ``agent`` the
    way its producers do (the record writers: lock, staging, atomic rename), every stamp at
    ``at_ms``."""
    clock = FakeClock(wall_ms=at_ms)
    status.write(seat_dir, status.BUSY, clock)
    assert harness_state.Writer(seat_dir, agent, "codex", clock, pty_session="pty-on-b").observe("idle", input_buffer="empty")
    context = harness_context.Writer(seat_dir, agent, "codex", "incarnation-on-b", clock)
    assert context.publish(harness_context.Reading(used_tokens=42_000, window_tokens=100_000, used_percent=42.0,
                                                   model="gpt-5", observed_at_ms=at_ms))



def roster(fleet: Fleet, now_ms: int | None = None) -> dict[str, dict]:
    """``st2 --host <fleet's host> agents --json`` (every host's seats, as that host reads them),
    projected at ``now_ms`` (the command clock) when given, by identity, in roster order."""
    env = dict(fleet.env, ST2_CLOCK_WALL_MS=str(now_ms)) if now_ms is not None else fleet.env
    result = run_st2("--host", fleet.host, "agents", "--json", env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return {row["identity"]: row for row in json.loads(result.stdout)}


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
