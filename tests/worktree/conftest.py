"""Fixtures for the worktree tier: a temp fleet and a real git repository beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from supervisor_support import temporary_fleet
from worktree_support import GIT_IDENTITY, make_repository


@pytest.fixture
def fleet():
    with temporary_fleet("st2w-") as group:
        group.env.update(GIT_IDENTITY, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1")
        yield group


@pytest.fixture
def repo(fleet) -> Path:
    return make_repository(fleet.base / "repo")
