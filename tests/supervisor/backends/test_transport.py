"""Which detachment a task gets. Nothing here runs systemd-run: only the argv is inspected."""

from __future__ import annotations

import os
from pathlib import Path

from st2.supervisor.backends import transport


def fake_user_manager(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "run" / "systemd").mkdir(parents=True)
    (tmp_path / "run" / "systemd" / "private").write_text("")
    binaries = tmp_path / "bin"
    binaries.mkdir()
    fake = binaries / "systemd-run"
    fake.write_text("#!/bin/sh\nexit 99\n")
    fake.chmod(0o755)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("PATH", f"{binaries}{os.pathsep}{os.environ['PATH']}")


def test_a_reachable_user_manager_gives_each_task_its_own_transient_scope(tmp_path, monkeypatch):
    monkeypatch.delenv("ST2_TRANSPORT", raising=False)
    fake_user_manager(tmp_path, monkeypatch)
    prefix = transport.prefix("h.agent")
    assert prefix[:5] == ["systemd-run", "--user", "--scope", "--collect", "--quiet"]
    assert prefix[5].startswith("--unit=st2-task-h.agent-") and prefix[-1] == "--"


def test_without_a_user_manager_tasks_use_plain_setsid(tmp_path, monkeypatch):
    monkeypatch.delenv("ST2_TRANSPORT", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert transport.prefix("h.agent") == []
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert transport.prefix("h.agent") == []


def test_forcing_setsid_wins_over_a_reachable_manager(tmp_path, monkeypatch):
    fake_user_manager(tmp_path, monkeypatch)
    monkeypatch.setenv("ST2_TRANSPORT", "setsid")
    assert transport.prefix("h.agent") == []
