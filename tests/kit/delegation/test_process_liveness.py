"""PID liveness from /proc/<pid>/stat: start time defeats PID reuse; a zombie is not alive."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys
import time

from st2.kit.delegation import process_liveness


@pytest.mark.process
def test_a_running_child_is_alive_with_and_without_its_start_time(children) -> None:
    child = children.sleeper()
    ticks = process_liveness.start_ticks(child.pid)
    assert ticks is not None
    assert process_liveness.is_alive(child.pid)
    assert process_liveness.is_alive(child.pid, ticks)


@pytest.mark.process
def test_a_different_start_time_is_a_reused_pid_not_the_producer(children) -> None:
    child = children.sleeper()
    ticks = process_liveness.start_ticks(child.pid)
    assert not process_liveness.is_alive(child.pid, ticks - 1)


@pytest.mark.process
def test_an_exited_and_reaped_child_is_not_alive(children) -> None:
    assert not process_liveness.is_alive(children.exited())


@pytest.mark.process
def test_a_zombie_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while process_liveness.read_stat(child.pid)[0] != "Z":
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.01)
        assert os.path.exists(f"/proc/{child.pid}")
        assert not process_liveness.is_alive(child.pid)
        assert process_liveness.start_ticks(child.pid) is None
    finally:
        child.wait()


@pytest.mark.process
def test_a_command_name_with_spaces_and_parentheses_is_parsed(tmp_path) -> None:
    marker = tmp_path / "renamed"
    code = (
        "import pathlib, time; pathlib.Path('/proc/self/comm').write_text('a) b (c 1 2');"
        f"pathlib.Path({str(marker)!r}).write_text('ok'); time.sleep(60)"
    )
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 10
        while not marker.exists():
            assert time.monotonic() < deadline, "the child never renamed itself"
            time.sleep(0.01)
        with open(f"/proc/{child.pid}/stat") as stat_file:
            assert stat_file.read().startswith(f"{child.pid} (a) b (c 1 2) ")
        state, ticks = process_liveness.read_stat(child.pid)
        assert state in "RS"
        assert process_liveness.is_alive(child.pid, ticks)
    finally:
        child.kill()
        child.wait()


def test_nonpositive_and_absent_pids_are_not_alive() -> None:
    assert not process_liveness.is_alive(0)
    assert not process_liveness.is_alive(2**22 + 12345)


@pytest.mark.process
def test_without_proc_existence_is_read_by_signal_zero(children, monkeypatch) -> None:
    child = children.sleeper()
    real_isdir = os.path.isdir
    monkeypatch.setattr(process_liveness.os.path, "isdir", lambda path: False if path == "/proc/self" else real_isdir(path))
    assert process_liveness.is_alive(child.pid)
    assert process_liveness.is_alive(1)  # init exists (signal 0 is permitted or EPERM)
    assert not process_liveness.is_alive(children.exited())
