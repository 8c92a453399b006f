"""Fixtures for the record tests."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest


@pytest.fixture
def fast_catalog(tmp_path: Path):
    """A catalog root on tmpfs (/dev/shm) when there is one, else under tmp_path. For tests of
    serialization, atomic replacement and inotify, whose semantics tmpfs shares, that would
    otherwise pay a disk fsync (about 7 ms here) per write."""
    shared_memory = Path("/dev/shm")
    base = shared_memory / f"st2-test-{uuid.uuid4().hex}" if shared_memory.is_dir() else tmp_path
    root = base / "catalog"
    (root / "agents").mkdir(parents=True)
    yield root
    if base != tmp_path:
        shutil.rmtree(base, ignore_errors=True)
