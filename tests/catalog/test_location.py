"""Which catalog and host a command acts on: --catalog, else $CATALOG, else the XDG default."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from st2.catalog.location import default_catalog_root, resolve_catalog_root, resolve_host


def test_the_option_wins_over_the_environment(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG", str(tmp_path / "from-env"))
    assert resolve_catalog_root(str(tmp_path / "from-option")) == tmp_path / "from-option"


def test_the_environment_wins_over_the_default(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CATALOG", str(tmp_path / "from-env"))
    assert resolve_catalog_root(None) == tmp_path / "from-env"


def test_the_default_lives_under_xdg_state_home(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CATALOG", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert resolve_catalog_root(None) == tmp_path / "state" / "st2" / "default" / "catalog"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_catalog_root() == tmp_path / "home" / ".local" / "state" / "st2" / "default" / "catalog"


def test_a_relative_catalog_is_made_absolute(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_catalog_root("cat") == tmp_path / "cat"


def test_the_host_is_the_option_else_the_short_hostname(monkeypatch) -> None:
    assert resolve_host("alpha") == "alpha"
    real = os.uname()
    monkeypatch.setattr(os, "uname", lambda: os.uname_result((real.sysname, "build-7.example.org", real.release,
                                                               real.version, real.machine)))
    assert resolve_host(None) == "build-7"
    monkeypatch.undo()
    assert resolve_host(None) == socket.gethostname().split(".")[0]  # the node name is the hostname
