"""Test helpers: the real `st2` CLI as a subprocess, environment, JSON compaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def st2_env(catalog: Path | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ST_AGENT", None)
    if catalog is not None:
        env["CATALOG"] = str(catalog)
    env.update(extra)
    return env


def run_st2(*args: str, catalog: Path | None = None, input: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the real `st2` entry point as a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "st2", *args],
        input=input,
        capture_output=True,
        text=True,
        env=env if env is not None else st2_env(catalog),
        timeout=timeout,
        cwd=REPO,
    )


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def poll_for(predicate, what: str = "the condition", timeout: float = 30.0):
    """Poll ``predicate`` until it returns a truthy value (returned) or ``timeout`` seconds pass
    (AssertionError naming ``what``): observable progress, never a bare sleep."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def make_seat(catalog: Path, host: str = "host", identity: str = "worker"):
    """A seat directory under ``catalog`` (created) as the drivers' :class:`~st2.drivers.seat.Seat`."""
    from st2.drivers.seat import Seat

    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True, exist_ok=True)
    return Seat(directory, f"{host}.{identity}")


def record(seat, name: str):
    """The seat's record ``name`` decoded, or None when absent."""
    path = seat.directory / name
    return json.loads(path.read_text()) if path.exists() else None
