"""Per-record cross-process locks.

A record ``<dir>/<name>`` is serialized by ``<dir>/.<name>.lock`` (``.harness-context.lock``
beside ``harness-context``). The lock file is never deleted: deleting a lock file another
process holds open lets two writers in at once.

Every st2 lock is this one primitive, ``fcntl.flock`` on a persistent lock file — the same lock
filelock's Unix lock takes. Record locks sit on hot paths (hooks, the status-line tee) that may
import only the standard library, and the long-lived locks (the supervisor's host lock, the
catalog authoring lock) are taken by short processes too (every ``st2 up --once`` and every
authoring verb): importing :mod:`filelock` 4.3 costs 40–50 ms of CPU per process on this machine
(``python -X importtime``), more than the rest of an ``st2 validate``. ``timeout=0`` tries once.
"""

from __future__ import annotations

import errno
import fcntl
import os
import time

from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing pathlib costs a hook firing milliseconds
    from pathlib import Path

DEFAULT_TIMEOUT_SECONDS = 10.0
_POLL_SECONDS = 0.005


class LockTimeout(TimeoutError):
    """The lock was not acquired within the timeout."""


def lock_path_for(record: Path | str) -> Path | str:
    """``<dir>/.<name>.lock`` for ``<dir>/<name>``, of ``record``'s kind (st2.fs.paths.like)."""
    directory, name = os.path.split(os.fspath(record))
    return like(record, os.path.join(directory, f".{name}.lock"))


class RecordLock:
    """An exclusive ``flock`` on a record's lock file, usable as a context manager.

    Not reentrant; one holder per open file description. Released on close, and by the kernel
    when the holder dies (SIGKILL included), so a crashed writer never wedges the record.
    """

    def __init__(self, path: Path | str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> None:
        self.path = path
        self.timeout = timeout
        self._descriptor: int | None = None

    def acquire(self) -> None:
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self._descriptor = descriptor
                return
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.EACCES):
                    os.close(descriptor)
                    raise
            if time.monotonic() >= deadline:
                os.close(descriptor)
                raise LockTimeout(f"{self.path}: lock not acquired within {self.timeout}s")
            time.sleep(_POLL_SECONDS)

    def release(self) -> None:
        if self._descriptor is not None:
            try:
                fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            finally:
                os.close(self._descriptor)
                self._descriptor = None

    @property
    def is_locked(self) -> bool:
        return self._descriptor is not None

    def __enter__(self) -> "RecordLock":
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()


def record_lock(record: Path | str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> RecordLock:
    """Return the lock that serializes writers of ``record`` (use as a context manager)."""
    return RecordLock(lock_path_for(record), timeout=timeout)


def holders(path: Path | str, table: str = "/proc/locks") -> set[int]:
    """The PIDs holding a ``flock`` on ``path`` now, as the kernel's lock table tells (for a
    flock, the PID that took it; waiters, marked ``->``, are not holders). Empty when the file
    or the table cannot be read."""
    try:
        status = os.stat(path)
        with open(table, "rb") as handle:
            lines = handle.read().decode("ascii", "replace").splitlines()
    except OSError:
        return set()
    wanted = (os.major(status.st_dev), os.minor(status.st_dev), status.st_ino)
    found = set()
    for line in lines:
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":
            continue
        device = fields[5].split(":")
        try:
            if (int(device[0], 16), int(device[1], 16), int(device[2])) == wanted and int(fields[4]) > 0:
                found.add(int(fields[4]))
        except (ValueError, IndexError):
            continue
    return found


__all__ = ["record_lock", "lock_path_for", "RecordLock", "LockTimeout", "holders"]
