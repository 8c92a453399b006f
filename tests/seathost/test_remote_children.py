"""The seat host tracks the children its zygote forked by PID and start ticks (they are not its
children to wait for): one counts as alive while a process with that PID and start time runs,
and is forgotten once the PID is gone or reused (other start ticks)."""

from __future__ import annotations

import os

from st2.process import proc_stat
from st2.seathost.server import SeatHost


def host_tracking(remote: dict[int, int]) -> SeatHost:
    host = SeatHost.__new__(SeatHost)   # only the tracking, no socket, lock or inotify instance
    host.remote = dict(remote)
    return host


def test_a_running_child_with_its_start_ticks_keeps_the_host_alive():
    mine = proc_stat.read(os.getpid())
    host = host_tracking({os.getpid(): mine.start_ticks})
    assert host._remote_alive() is True
    assert host.remote == {os.getpid(): mine.start_ticks}


def test_a_reused_pid_or_a_gone_one_is_forgotten():
    mine = proc_stat.read(os.getpid())
    gone = 2 ** 22 + 1   # above the kernel's pid_max ceiling: never a process
    host = host_tracking({os.getpid(): mine.start_ticks + 1, gone: 5})
    assert host._remote_alive() is False
    assert host.remote == {}
