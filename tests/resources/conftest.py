"""Fixtures for the resource tests: a temp fleet under a real `st2 up` (process tier)."""

from __future__ import annotations

import pytest

from supervisor_support import temporary_fleet


@pytest.fixture
def fleet():
    with temporary_fleet("st2r-") as group:
        yield group
