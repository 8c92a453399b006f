"""Fixtures for the bus tests: a catalog with declared seats and principals."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

HOST = "h1"


def declare_seat(catalog: Path, host: str, identity: str, *, extra: str = "") -> Path:
    """Write ``agents/<host>/<identity>/agent.kdl`` (a plain shell seat) and return the seat dir."""
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh"\n{extra}}}\n')
    return directory


def declare_principal(catalog: Path, host: str, name: str) -> Path:
    directory = catalog / "principals" / host / name
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "principal.kdl").write_text(f'principal "{name}" host="{host}"\n')
    return directory


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (-> bytes) and directory (-> None) under ``root``, by relative path, for
    "nothing was written" checks: a refused operation must not even create an empty box."""
    return {
        str(path.relative_to(root)): path.read_bytes() if path.is_file() else None
        for path in sorted(root.rglob("*"))
    }


@pytest.fixture
def catalog(tmp_path: Path):
    """The bus tests' catalog lives on tmpfs when there is one. These tests publish thousands of
    fsynced files, and on a busy disk fsync waits dominate their run time; every property they
    prove (exclusive link, atomic visibility, no torn file after SIGKILL — the page cache
    survives a killed process) holds the same on tmpfs. Survival of a power cut is not something
    a process test can prove either way."""
    base = Path("/dev/shm")
    if not (base.is_dir() and os.access(base, os.W_OK)):
        base = tmp_path
    holder = Path(tempfile.mkdtemp(prefix="st2-bus-", dir=base))
    root = holder / "catalog"
    (root / "agents").mkdir(parents=True)
    yield root
    shutil.rmtree(holder, ignore_errors=True)


@pytest.fixture
def bus_catalog(catalog: Path) -> Path:
    """h1.alice, h1.bob (address "robert", stream "ci"), h2.bob, h1.carol (id "carol-1"),
    h1.gone (retired), h1.paused (suspended, stream "ci"), principal h1.svc."""
    declare_seat(catalog, HOST, "alice")
    declare_seat(catalog, HOST, "bob", extra='    address "robert"\n    stream "ci" { argv "ci-adapter"; }\n')
    declare_seat(catalog, "h2", "bob")
    declare_seat(catalog, HOST, "carol", extra='    id "carol-1"\n')
    declare_seat(catalog, HOST, "gone", extra='    desired-state "retired" reason="done"\n')
    declare_seat(catalog, HOST, "paused", extra='    desired-state "suspended" reason="waiting"\n    stream "ci" { argv "x"; }\n')
    declare_principal(catalog, HOST, "svc")
    return catalog


@pytest.fixture
def snapshot():
    """``snapshot(root)`` -> every file under root with its bytes."""
    return tree


@pytest.fixture
def seat_writer():
    """``seat_writer(catalog, host, identity, extra="")`` declares a seat."""
    return declare_seat


@pytest.fixture
def small_catalog(catalog: Path) -> Path:
    """h1.alice, h1.bob (address "robert", stream "ci"), principal h1.svc and the concurrent
    senders' principals h1.sender0..7 (a sender must be declared): the concurrency tests resolve
    recipients thousands of times, so their catalog stays small."""
    declare_seat(catalog, HOST, "alice")
    declare_seat(catalog, HOST, "bob", extra='    address "robert"\n    stream "ci" { argv "ci-adapter"; }\n')
    declare_principal(catalog, HOST, "svc")
    for index in range(8):
        declare_principal(catalog, HOST, f"sender{index}")
    return catalog
