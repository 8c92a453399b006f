"""Fixtures for tests/delegation. Helpers live in delegation_support.py beside this file."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from delegation_support import Children  # noqa: E402


@pytest.fixture
def children():
    started = Children()
    yield started
    started.end()
