"""Per-record cross-process locks on :mod:`filelock`.

A record ``<dir>/<name>`` is serialized by ``<dir>/.<name>.lock`` (``.harness-context.lock``
beside ``harness-context``). The lock file is never deleted: deleting a lock file another
process holds open lets two writers in at once.
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout

DEFAULT_TIMEOUT_SECONDS = 10.0


def lock_path_for(record: Path) -> Path:
    record = Path(record)
    return record.parent / f".{record.name}.lock"


def record_lock(record: Path, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> FileLock:
    """Return the lock that serializes writers of ``record`` (use as a context manager)."""
    return FileLock(str(lock_path_for(record)), timeout=timeout, thread_local=False)


__all__ = ["record_lock", "lock_path_for", "Timeout"]
