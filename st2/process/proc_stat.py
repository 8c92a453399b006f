"""``/proc/<pid>/stat``: a process's state and start time, the evidence that tells a recorded
process from whatever reuses its PID today. Standard library only: hooks and the roster use it.

Field 22 (``starttime``) is clock ticks since boot; this boot's time (:func:`boot_time`) plus
ticks over ``SC_CLK_TCK`` is the start time in seconds since the epoch. Every st2 process of a
boot reckons with one boot time, so two of them always give one process one start time.
"""

from __future__ import annotations

import os
import stat
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


BOOT_ID = "/proc/sys/kernel/random/boot_id"
BOOT_TIME = ".st2-boot-time"  # listed in st2.runtime.layout's table, which imports it
_SHARED_LIMIT = 128  # "<boot id> <btime>\n" is 48 bytes; anything longer is not ours

_boot_time: float | None = None


def boot_time() -> float:
    """This boot's time in seconds since the epoch, read once a process, and the same in every
    st2 process of this boot and user. Raise :class:`ProcUnavailable`.

    The kernel's ``btime`` is not a constant of the boot: it is the wall clock less the time
    since boot, truncated to a second, so a step of the wall clock (an NTP correction, a virtual
    machine resumed) can move it by a second or more. Two processes that read it on either side of
    a step would reckon one process's start time a second apart and take it for a reused PID.
    The first st2 process of a boot therefore records its reading beside the boot's id in one
    file per user (:func:`shared_path`), and every later one takes that value.
    Where that file cannot be read or written, or is not the user's own regular file, the
    kernel's own reading is used."""
    global _boot_time
    if _boot_time is None:
        _boot_time = shared_boot_time(shared_path())
    return _boot_time


def shared_path() -> str:
    """The user's shared boot time file, in ``/tmp`` itself, not ``$TMPDIR``: every environment of
    the user (a systemd unit, a login shell, another ``XDG_STATE_HOME``) must name the same file."""
    return f"/tmp/{BOOT_TIME}-{os.getuid()}"


def _kernel_boot_time() -> float:
    try:
        with open("/proc/stat", "rb") as handle:
            for line in handle:
                if line.startswith(b"btime "):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError) as error:
        raise ProcUnavailable(f"/proc/stat: {error}") from error
    raise ProcUnavailable("/proc/stat has no btime line")


def shared_boot_time(path: str) -> float:
    """The boot time recorded in ``path`` for this boot; else the kernel's reading, recorded there
    first. Raise :class:`ProcUnavailable` when neither can be read."""
    try:
        with open(BOOT_ID, "rb") as handle:
            boot_id = handle.read(64).strip()
    except OSError:
        return _kernel_boot_time()
    recorded = _read_shared(path, boot_id)
    if recorded is not None:
        return recorded
    seconds = _kernel_boot_time()
    _record_shared(path, boot_id, seconds)
    recorded = _read_shared(path, boot_id)  # another process may have recorded first: its value wins
    return seconds if recorded is None else recorded


def _read_shared(path: str, boot_id: bytes) -> float | None:
    """The recorded boot time when the file is the user's own regular file naming this boot,
    else None. Never follows a symlink, never waits on a FIFO, and a file over 128 bytes is not a record."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.getuid():
            return None
        data = os.read(descriptor, _SHARED_LIMIT + 1)
    except OSError:
        return None
    finally:
        os.close(descriptor)
    fields = data.split()
    if len(data) > _SHARED_LIMIT or len(fields) != 2 or fields[0] != boot_id or not fields[1].isdigit():
        return None
    return float(fields[1])


def _record_shared(path: str, boot_id: bytes, seconds: float) -> None:
    """Record ``seconds`` for this boot: created once (a racing creator's value stays), or put in
    place of another boot's (or an unreadable) file. Failure is silent: the caller then keeps the
    kernel's reading."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.write(descriptor, boot_id + b" %d\n" % int(seconds))
        finally:
            os.close(descriptor)
        try:
            os.link(temporary, path)
        except FileExistsError:
            if _read_shared(path, boot_id) is None:
                os.replace(temporary, path)
    except OSError:
        pass
    finally:
        try:
            os.unlink(temporary)
        except OSError:
            pass


def start_time_seconds(start_ticks: int) -> float:
    """A start-ticks reading as seconds since the epoch."""
    return boot_time() + start_ticks / CLOCK_TICKS
