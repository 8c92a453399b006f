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


@pytest.fixture(autouse=True)
def no_operator_knob_file(tmp_path_factory, monkeypatch):
    """The knob file's default location is under the config home: point it (and HOME) at empty
    directories, so no operator's real delegation-config.knobs reaches a test (hermetic_env and
    the in-process readers both inherit it)."""
    config = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    # A reader handed a mapping without XDG_CONFIG_HOME falls back to ~/.config.
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("DELEGATION_KIT_KNOB_FILE", raising=False)

