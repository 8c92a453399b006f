"""Process identity: a PID together with its process start time.

A PID alone is not an identity: the kernel reuses PIDs, so a launch record naming PID 4242 says
nothing about whatever runs as 4242 today. Every decision to adopt, report or kill a recorded
process first checks that the live process has the recorded start time.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone

from st2.process import proc_stat

# psutil derives the start time from boot time plus start ticks; two reads of one process agree
# exactly, but round-tripping through JSON floats may lose the last digits.
START_TIME_TOLERANCE_SECONDS = 0.02


@dataclass(frozen=True)
class ProcessIdentity:
    pid: int
    start_time: float

    @property
    def created_at(self) -> str:
        """The start time as RFC 3339 UTC with milliseconds (``2026-07-31T10:00:00.000Z``)."""
        return rfc3339_millis(self.start_time)


def rfc3339_millis(seconds: float) -> str:
    moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _proc_stat(pid: int) -> ProcessIdentity | None | bool:
    """Linux fast path: one read of ``/proc/<pid>/stat`` gives state and start ticks (see
    :mod:`st2.process.proc_stat`). Returns False when /proc is not usable here, so the caller
    falls back to psutil."""
    try:
        stat = proc_stat.read(pid)
        if stat is None or not stat.running:
            return None
        return ProcessIdentity(pid, proc_stat.start_time_seconds(stat.start_ticks))
    except proc_stat.ProcUnavailable:
        return False


def observe(pid: int) -> ProcessIdentity | None:
    """The identity of the live process ``pid``, or None when there is none (a zombie counts as
    gone: it will never run again)."""
    if pid <= 0:
        return None
    fast = _proc_stat(pid)
    if fast is not False:
        return fast
    # Only where /proc is unusable; importing psutil here keeps it out of every reader that
    # only ever takes the /proc path (the roster, the DING notifier).
    import psutil

    try:
        process = psutil.Process(pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return ProcessIdentity(pid, process.create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        # Another user's process: it exists, but it is certainly not one we launched with this
        # start time unless the start time still matches, which we cannot read; treat as foreign.
        return ProcessIdentity(pid, -1.0)


def same_start(left: float, right: float) -> bool:
    return abs(left - right) <= START_TIME_TOLERANCE_SECONDS


class Liveness:
    """What a recorded identity means today."""

    ALIVE = "alive"          # same PID, same start time
    GONE = "gone"            # no such process (or a zombie)
    REUSED = "reused"        # the PID is alive but belongs to a different process


def liveness(recorded: ProcessIdentity) -> str:
    current = observe(recorded.pid)
    if current is None:
        return Liveness.GONE
    if same_start(current.start_time, recorded.start_time):
        return Liveness.ALIVE
    return Liveness.REUSED


def generation_id(backend: str, runtime_id: str, identity: ProcessIdentity) -> str:
    """An opaque generation id over stable evidence: backend, runtime id, pid, creation time."""
    digest = hashlib.sha256()
    for value in (backend, runtime_id, str(identity.pid), identity.created_at):
        encoded = value.encode()
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return "sha256:" + digest.hexdigest()
