"""Is a recorded PID a live producer?

Read from ``/proc/<pid>/stat``: a process exists when the file does, a zombie (``Z``) or dead
(``X``) task is not alive, and where the caller knows the process start time (field 22, clock
ticks since boot) a PID whose start time differs is a reused PID, not the recorded producer.
Standard library only (the hook-spawned reader imports this); Linux ``/proc`` is required.
"""

from __future__ import annotations

import os

_NOT_RUNNING_STATES = frozenset("ZXx")


def read_stat(pid: int) -> tuple[str, int] | None:
    """Return ``(state, start_ticks)`` from ``/proc/<pid>/stat``, or None when no such process
    can be read. The command name (field 2) may hold spaces and parentheses, so fields are
    counted after its last closing parenthesis."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat_file:
            text = stat_file.read().decode("ascii", "replace")
    except OSError:
        return None
    _, parenthesis, rest = text.rpartition(")")
    if not parenthesis:
        return None
    fields = rest.split()
    # fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    if len(fields) < 20 or not fields[19].isdigit():
        return None
    return fields[0], int(fields[19])


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
        return _exists_by_signal(pid)
    stat = read_stat(pid)
    if stat is None:
        return False
    state, ticks = stat
    if state in _NOT_RUNNING_STATES:
        return False
    return start is None or ticks == start


def _exists_by_signal(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OSError:
        return False
    return True


__all__ = ["is_alive", "read_stat", "start_ticks"]
