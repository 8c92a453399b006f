"""Fixtures for the authoring tier: a temp fleet (catalog, runtime scope, supervisors it starts)."""

from __future__ import annotations

import pytest

from supervisor_support import temporary_fleet


@pytest.fixture
def fleet():
    with temporary_fleet("st2a-") as group:
        yield group
