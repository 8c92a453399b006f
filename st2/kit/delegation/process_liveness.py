"""Is a recorded PID a live producer?

Read from ``/proc/<pid>/stat``: a process exists when the file does, a zombie (``Z``) or dead
(``X``) task is not alive, and where the caller knows the process start time (field 22, clock
ticks since boot) a PID whose start time differs is a reused PID, not the recorded producer.
Standard library only (the hook-spawned reader imports this); Linux ``/proc`` is required.
"""

from __future__ import annotations

import os

from st2.process import proc_stat
from st2.process.existence import pid_exists

_NOT_RUNNING_STATES = proc_stat.NOT_RUNNING_STATES


def read_stat(pid: int) -> tuple[str, int] | None:
    """Return ``(state, start_ticks)`` from ``/proc/<pid>/stat``, or None when no such process
    can be read."""
    try:
        stat = proc_stat.read(pid)
    except proc_stat.ProcUnavailable:
        return None
    return None if stat is None else (stat.state, stat.start_ticks)


def start_ticks(pid: int) -> int | None:
    """The process start time of ``pid`` in clock ticks since boot, or None if not running."""
    stat = read_stat(pid)
    if stat is None or stat[0] in _NOT_RUNNING_STATES:
        return None
    return stat[1]


def is_alive(pid: int, start: int | None = None) -> bool:
    """True when ``pid`` names a running (non-zombie) process and, when ``start`` is given, that
    process started at ``start`` ticks. Without ``/proc`` (not Linux) only existence can be
    read, by signal 0, and a start time cannot be checked: the PID's existence decides."""
    if pid <= 0:
        return False
    if not os.path.isdir("/proc/self"):
        return pid_exists(pid)
    stat = read_stat(pid)
    if stat is None:
        return False
    state, ticks = stat
    if state in _NOT_RUNNING_STATES:
        return False
    return start is None or ticks == start




__all__ = ["is_alive", "read_stat", "start_ticks"]
