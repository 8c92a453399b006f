"""Fixtures for the runtime tier: a short-path scope and backends that clean up after
themselves (every tmux server a test starts is killed via its own socket at teardown)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from st2.supervisor.backends.exec_backend import ExecBackend
from st2.supervisor.backends.process_group import kill_group, reap_children
from st2.runtime.scope import RuntimeScope
from st2.supervisor.backends.tmux_backend import TmuxBackend


@pytest.fixture
def scope(short_dir: Path, monkeypatch) -> RuntimeScope:
    monkeypatch.setenv("ST2_TRANSPORT", "setsid")
    catalog = short_dir / "c"
    catalog.mkdir()
    return RuntimeScope(catalog, "h", state_dir=short_dir / "s")


@pytest.fixture
def launched():
    records = []
    yield records
    for record in records:
        if record.socket:
            subprocess.run(["tmux", "-S", record.socket, "kill-server"], capture_output=True)
        kill_group(record.identity, grace_seconds=1)
    reap_children()


@pytest.fixture
def exec_backend(scope: RuntimeScope) -> ExecBackend:
    return ExecBackend(scope, scope.catalog / "logs")


@pytest.fixture
def tmux_backend(scope: RuntimeScope) -> TmuxBackend:
    return TmuxBackend(scope)


def environment(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env



from supervisor_support import Fleet, listener  # noqa: E402,F401 (listener is a fixture)


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2p-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    shutil.rmtree(base, ignore_errors=True)

