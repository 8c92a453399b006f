"""Fixtures shared by every tier; helpers live in tests/support.py (importable as `support`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.clock import FakeClock
from support import run_st2


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "catalog"
    (root / "agents").mkdir(parents=True)
    return root


@pytest.fixture
def st2():
    return run_st2
