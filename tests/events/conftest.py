"""Fixtures for the fleet event tests: a supervised temp fleet whose usage knobs point into it."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from supervisor_support import Fleet, listener  # noqa: E402,F401 (listener is a fixture)
from events_support import isolate_usage  # noqa: E402


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2e-"))
    group = Fleet(base)
    isolate_usage(group)
    yield group
    group.cleanup()
    shutil.rmtree(base, ignore_errors=True)

