from __future__ import annotations

import os
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import pytest

from support import poll_for
from st2.runtime import launch_record
from st2.supervisor.backends.backend import LaunchError, RuntimeState, TaskSpec
from st2.process.identity import observe
from st2.supervisor.backends.process_group import group_alive
from st2.runtime.scope import RuntimeScope, socket_admission_error
from st2.supervisor.backends.tmux_backend import TmuxBackend, panes


@pytest.mark.process
def test_pty_task_gets_its_own_tmux_server_outside_our_group(tmux_backend, scope, launched, short_dir):
    marker = short_dir / "env"
    spec = TaskSpec("h.p", "pty", ("sh", "-c", f'echo "$ST_AGENT $$" > {marker}; exec sleep 60'),
                    {**os.environ, "ST_AGENT": "h.p"})
    record = tmux_backend.launch(spec)
    launched.append(record)
    assert record.socket == str(scope.socket("h.p"))
    assert poll_for(lambda: marker.exists() and marker.read_text().strip())
    agent, pid = marker.read_text().split()
    assert agent == "h.p" and int(pid) == record.pid          # the pane PID is the task's PID
    for process in (record.pid, record.server_pid):
        assert os.getpgid(process) != os.getpgid(0)
        assert os.getsid(process) != os.getsid(0)
    assert launch_record.read(scope, "h.p") == record
    assert tmux_backend.observe(record).state is RuntimeState.RUNNING


@pytest.mark.process
def test_pty_kill_takes_down_the_server_and_the_pane_group(tmux_backend, launched, short_dir):
    marker = short_dir / "child"
    record = tmux_backend.launch(TaskSpec("h.k", "pty", ("sh", "-c", f"sleep 60 & echo $! > {marker}; wait")))
    launched.append(record)
    assert poll_for(lambda: marker.exists() and marker.read_text().strip())
    child = int(marker.read_text())
    tmux_backend.kill(record)
    assert panes(record.socket) is None
    assert not os.path.exists(record.socket)
    assert observe(child) is None and observe(record.pid) is None
    assert not group_alive(record.pid)
    assert tmux_backend.observe(record).state is RuntimeState.EXITED


@pytest.mark.process
def test_a_pty_task_that_exits_ends_its_server(tmux_backend, launched):
    record = tmux_backend.launch(TaskSpec("h.e", "pty", ("sleep", "0.3")))
    launched.append(record)
    assert poll_for(lambda: tmux_backend.observe(record).state is RuntimeState.EXITED)
    assert poll_for(lambda: panes(record.socket) is None)


@pytest.mark.process
def test_a_pty_pid_alive_without_its_server_is_vanished_not_running(tmux_backend, launched):
    record = tmux_backend.launch(TaskSpec("h.v", "pty", ("sleep", "60")))
    launched.append(record)
    moved = replace(record, socket=record.socket + "x")
    observation = tmux_backend.observe(moved)
    assert observation.state is RuntimeState.VANISHED
    assert tmux_backend.observe(record).state is RuntimeState.RUNNING


@pytest.mark.process
def test_a_reused_pty_pid_is_not_adopted(tmux_backend, launched):
    record = tmux_backend.launch(TaskSpec("h.u", "pty", ("sleep", "60")))
    launched.append(record)
    observation = tmux_backend.observe(replace(record, start_time=record.start_time + 50))
    assert observation.state is RuntimeState.INDETERMINATE and observation.pid_reused


def test_an_over_long_socket_path_is_refused_naming_path_and_overage(short_dir):
    deep = short_dir / ("d" * 60)
    scope = RuntimeScope(short_dir / "c", "h", state_dir=deep)
    backend = TmuxBackend(scope)
    runtime_id = "h." + "x" * 30
    path = scope.socket(runtime_id)
    overage = len(os.fsencode(str(path))) + 1 - 104
    assert overage > 0
    with pytest.raises(LaunchError) as refused:
        backend.launch(TaskSpec(runtime_id, "pty", ("sleep", "1")))
    assert str(path) in str(refused.value)
    assert f"by {overage} byte" in str(refused.value)
    assert not scope.directory.exists()            # refused before anything was written


def test_a_socket_path_that_fits_is_admitted(short_dir):
    path = short_dir / "s"
    assert socket_admission_error(path) is None
    exact = Path("/" + "a" * 102)                  # 103 bytes + NUL = 104: fits exactly
    assert socket_admission_error(exact) is None
    assert "by 1 byte" in socket_admission_error(Path("/" + "a" * 103))
