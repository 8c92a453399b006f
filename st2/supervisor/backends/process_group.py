"""Killing a task's whole process group, and reaping our own children.

Linux never hands out a PID that is still in use as a process-group or session id, so:
if the recorded leader is alive with its recorded start time, its group is ours; if the leader
is gone, any process still in a group with that id is a leftover of ours; if the PID now names a
different process, our group is certainly empty and nothing is killed.
"""

from __future__ import annotations

import os
import signal
import time

from st2.process.existence import group_exists
from st2.process.identity import Liveness, ProcessIdentity, liveness

TERMINATE_GRACE_SECONDS = 3.0
POLL_SECONDS = 0.02


def reap_children() -> dict[int, int]:
    """Reap every exited child of this process without blocking; return pid -> wait status."""
    reaped: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped[pid] = status


    return True


def group_alive(group_id: int) -> bool:
    """True while a member of the group is alive (zombies awaiting another reaper do not count)."""
    reap_children()
    return group_exists(group_id) and not _only_zombies(group_id)


def kill_group(leader: ProcessIdentity, grace_seconds: float = TERMINATE_GRACE_SECONDS) -> bool:
    """SIGTERM the group led by ``leader``, SIGKILL it after ``grace_seconds``, and wait until
    no member is left. Return True when the group is gone (or was never ours)."""
    if liveness(leader) == Liveness.REUSED:
        return True
    group_id = leader.pid
    if not group_exists(group_id):
        return True
    _signal_group(group_id, signal.SIGTERM)
    if _wait_gone(group_id, grace_seconds):
        return True
    _signal_group(group_id, signal.SIGKILL)
    return _wait_gone(group_id, grace_seconds)


def _signal_group(group_id: int, number: int) -> None:
    try:
        os.killpg(group_id, number)
    except (ProcessLookupError, PermissionError):
        pass


def _wait_gone(group_id: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if not group_alive(group_id):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)


def _only_zombies(group_id: int) -> bool:
    """True when every remaining member of the group is a zombie someone else must reap."""
    import psutil

    try:
        members = [p for p in psutil.process_iter(["pid", "status"]) if _group_of(p.info["pid"]) == group_id]
    except psutil.Error:
        return False
    return all(member.info["status"] == psutil.STATUS_ZOMBIE for member in members)


def _group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except (ProcessLookupError, PermissionError):
        return None
