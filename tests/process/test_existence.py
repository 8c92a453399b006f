"""The one PID-exists check (signal 0) and its process-group twin."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from st2.process.existence import group_exists, pid_exists


@pytest.mark.process
def test_a_reaped_child_no_longer_exists_and_its_group_is_gone() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert pid_exists(child.pid) and group_exists(child.pid)
    finally:
        child.kill()
        child.wait()
    assert not pid_exists(child.pid) and not group_exists(child.pid)


def test_this_process_and_init_exist_and_nonsense_does_not() -> None:
    assert pid_exists(os.getpid()) and pid_exists(1)  # init: another user's process still exists
    assert not pid_exists(0) and not pid_exists(-5) and not group_exists(0)
