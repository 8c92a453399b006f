"""``/proc/<pid>/stat``: a process's state and start time, the evidence that tells a recorded
process from whatever reuses its PID today. Standard library only: hooks and the roster use it.

Field 22 (``starttime``) is clock ticks since boot; boot time (``btime`` in ``/proc/stat``) plus
ticks over ``SC_CLK_TCK`` is the start time in seconds since the epoch, computed exactly as
psutil computes ``create_time`` so the two agree.
"""

from __future__ import annotations

import os
from collections import namedtuple

NOT_RUNNING_STATES = frozenset("ZXx")  # zombie, dead: will never run again
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class ProcUnavailable(OSError):
    """``/proc`` cannot answer for this PID (not Linux, no permission, an unparseable line)."""


# collections.namedtuple, not typing.NamedTuple: typing costs a per-firing path (the liveness
# reader) a tenth of a bare interpreter start.
class ProcStat(namedtuple("ProcStat", ("state", "start_ticks"))):
    """A process's one-letter state and its start time in clock ticks since boot."""

    __slots__ = ()

    @property
    def running(self) -> bool:
        return self.state not in NOT_RUNNING_STATES


def read(pid: int) -> ProcStat | None:
    """The process's state and start ticks; None when there is no such process. Raise
    :class:`ProcUnavailable` when ``/proc`` cannot tell. The command name (field 2) may hold
    spaces and parentheses, so fields are counted after its last closing parenthesis."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ProcUnavailable(str(error)) from error
    closing = data.rfind(b")")
    fields = data[closing + 2:].split() if closing >= 0 else []
    # fields[0] is field 3 (state); field 22 (starttime) is fields[19].
    if len(fields) < 20 or not fields[19].isdigit():
        raise ProcUnavailable(f"/proc/{pid}/stat: unexpected shape")
    return ProcStat(fields[0].decode("ascii", "replace"), int(fields[19]))


_boot_time: float | None = None


def boot_time() -> float:
    """Boot time in seconds since the epoch (``btime``), read once. Raise :class:`ProcUnavailable`."""
    global _boot_time
    if _boot_time is None:
        try:
            with open("/proc/stat", "rb") as handle:
                for line in handle:
                    if line.startswith(b"btime "):
                        _boot_time = float(line.split()[1])
                        break
        except (OSError, ValueError, IndexError) as error:
            raise ProcUnavailable(f"/proc/stat: {error}") from error
        if _boot_time is None:
            raise ProcUnavailable("/proc/stat has no btime line")
    return _boot_time


def start_time_seconds(start_ticks: int) -> float:
    """A start-ticks reading as seconds since the epoch."""
    return boot_time() + start_ticks / CLOCK_TICKS
