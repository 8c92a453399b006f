"""Reading a file only when it is a real regular file: opened with ``O_NOFOLLOW`` (a symlink is
never followed) and checked with ``fstat`` on the open descriptor (no check-then-open race).
Standard library only: the bus and hot paths import this."""

from __future__ import annotations

import os
import stat
from pathlib import Path


class NotRegular(OSError):
    """The path is a symlink, a directory or a special file."""


def read_regular(path: Path) -> tuple[bytes, int]:
    """``(bytes, permission bits)`` of the regular file at ``path``. Raise ``FileNotFoundError``
    when it is absent and :class:`NotRegular` (an ``OSError``) when it is not a regular file."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise NotRegular(error.errno, f"{path}: cannot be opened as a regular file ({error.strerror})") from error
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(f"{path}: is not a regular file")
        chunks = []
        while chunk := os.read(descriptor, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks), status.st_mode & 0o777
    finally:
        os.close(descriptor)
