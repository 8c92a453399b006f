"""st2's logs, the owner's alone: appending one line to an advisory log (the one primitive behind
the delegation stop log, the usage sample history and the notify log), and opening the log a
child writes to (exec tasks, DING, the seat host). Standard library only (the first two writers
are hot paths)."""

from __future__ import annotations

import errno
import os
import stat

LOG_MODE = 0o600  # st2's logs, like its host-local records, are the owner's alone
DIRECTORY_MODE = 0o700


def append_line(path: str, text: str, *, rotate_at: int | None = None) -> bool:
    """Append ``text`` (one line, its newline included) to the log at ``path`` in one
    ``O_APPEND`` write — concurrent writers never interleave inside a line — creating the file
    (owner-only; an existing one is made owner-only too) and its directory (owner-only) if
    needed; anything but a regular file there (a FIFO, a device) is not written to. With
    ``rotate_at``, a log already that many bytes long first becomes ``<path>.1`` (replacing the
    older one), so the two never hold much more than twice that (for a log with one writer).
    Fail-soft: False when it could not be written,
    so an advisory log never changes a caller's verdict."""
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, mode=DIRECTORY_MODE, exist_ok=True)
        if rotate_at is not None:
            _rotate(path, rotate_at)
        descriptor = _open(path)
        try:
            status = os.fstat(descriptor)
            if not stat.S_ISREG(status.st_mode):
                return False
            if status.st_mode & 0o777 != LOG_MODE:
                os.fchmod(descriptor, LOG_MODE)
            os.write(descriptor, text.encode("utf-8"))
        finally:
            os.close(descriptor)
        return True
    except OSError:
        return False


def _rotate(path: str, bound: int) -> None:
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(status.st_mode) and status.st_size >= bound:
        os.replace(path, path + ".1")


def _open(path: str) -> int:
    """The log opened for appending; ``O_NONBLOCK``, so opening a FIFO planted there never waits
    for a reader."""
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK, LOG_MODE)


def open_log(path: str | os.PathLike, *, truncate: bool = False) -> int:
    """A descriptor of the log at ``path`` for a child's stdout and stderr, appending (from empty
    when ``truncate``): created owner-only, an existing one made owner-only, its directory
    created owner-only if missing — a log quotes what st2 handles (DING's quotes a message's
    subject and sender), so under any umask it is the owner's alone. Raise
    :class:`st2.fs.read.NotRegular` when what is there is not a regular file (a FIFO is opened
    without waiting for a reader), OSError when it cannot be opened. The caller closes it."""
    from st2.fs.read import NotRegular

    path = os.fspath(path)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, mode=DIRECTORY_MODE, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK | (os.O_TRUNC if truncate else os.O_APPEND)
    try:
        descriptor = os.open(path, flags, LOG_MODE)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a FIFO without a reader
            raise NotRegular(error.errno, "is a FIFO, not a regular file", path) from None
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(errno.EINVAL, "is not a regular file", path)
        if status.st_mode & 0o777 != LOG_MODE:
            os.fchmod(descriptor, LOG_MODE)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
