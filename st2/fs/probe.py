"""Whether a directory can take a write now: create, write one block, fsync and unlink a probe.

``st2 up --once`` probes the catalog control plane and its runtime directory before launching:
on a full disk, an exhausted inode table or a read-only mount every companion it starts would die
at once writing its first record, and a pass that reports success there lies. The probe raises
the machine's own :class:`OSError` (ENOSPC, EDQUOT, EROFS …) naming the probe path, and leaves
nothing behind. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.fs.atomic import write_all

PROBE_BYTES = 4096  # one block: a full filesystem refuses it even when an empty create succeeds


def probe_writable(directory: Path) -> None:
    """Raise :class:`OSError` unless ``directory`` accepts a new one-block file right now."""
    path = Path(directory) / f".st2-write-probe.{os.getpid()}.tmp"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        write_all(descriptor, b"\0" * PROBE_BYTES, path)
    finally:
        os.close(descriptor)
        os.unlink(path)
