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
    """HOME and the config home point at empty directories, so no operator's files reach a test;
    the knob file's default location is under the working directory's repository (st2's own has
    none), and every hook a test runs works from its own temporary directory."""
    config = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    # A reader handed a mapping without XDG_CONFIG_HOME falls back to ~/.config.
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.delenv("DELEGATION_KIT_KNOB_FILE", raising=False)

