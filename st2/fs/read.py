"""The one bounded read of a catalog or host-local file.

Anyone who can write a seat directory can plant a FIFO, a device or a 200 MB file where st2
expects a small regular file. Every reader of a catalog or host-local file (records, inbox
messages, the usage snapshot, declarations, launch records, ownership) reads through
:func:`read_bounded`, which

- opens ``O_RDONLY | O_NONBLOCK | O_CLOEXEC`` (plus ``O_NOFOLLOW`` unless told to follow), so
  opening a FIFO never waits for a writer;
- ``fstat``\\s the open descriptor and refuses anything but a regular file
  (:class:`NotRegular`), so nothing ever reads from a FIFO, a socket or a device;
- reads at most ``limit`` bytes and refuses a larger file whole (:class:`TooLarge`), never
  returning a truncated prefix as if it were the file.

Both refusals are :class:`OSError` subclasses, so a reader that already treats an unreadable
file as unknown treats them the same way; :class:`FileNotFoundError` still means absent.
Standard library only: hot paths import this.
"""

from __future__ import annotations

import errno
import os
import stat

KIB = 1024
MIB = 1024 * KIB

# The bound per format (bytes). A file larger than its bound is not one st2 or a harness wrote.
RECORD_LIMIT = 1 * MIB          # status, harness-state, harness-context, driver-diagnostic
MESSAGE_LIMIT = 4 * MIB         # one inbox or archive message
DECLARATION_LIMIT = 1 * MIB     # catalog.kdl, agent.kdl, principal.kdl
SNAPSHOT_LIMIT = 64 * KIB       # the usage.txt snapshot
RUNTIME_LIMIT = 64 * KIB        # launch records, park markers, ownership, supervisor records
HISTORY_LIMIT = 64 * MIB        # the usage sample history (an append log)
RENDER_LIMIT = 32 * MIB         # a render block's copy source or target file
TRANSCRIPT_LIMIT = 64 * MIB     # a harness task output file a hook inspects
JOURNAL_LIMIT = 4 * MIB         # one segment of the fleet event journal (st2.events.journal)

_CHUNK = 64 * KIB


class NotRegular(OSError):
    """The path names a FIFO, socket, device or directory (or, unfollowed, a symlink)."""


class TooLarge(OSError):
    """The file is larger than the bound its format allows."""


def kind_of(mode: int) -> str:
    """What a non-regular file's mode (``fstat`` or ``lstat``) is, in words (``a FIFO``, …)."""
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "not a regular file"


def read_bounded(path: str | os.PathLike, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The whole content of the regular file ``path`` (see :func:`read_with_status`)."""
    return read_with_status(path, limit, follow_symlinks=follow_symlinks)[0]


def open_regular(path: str | os.PathLike, *, follow_symlinks: bool, flags: int = os.O_RDONLY,
                 mode: int = 0o600) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file ``path`` and its ``fstat``; the caller closes it.
    ``flags`` (``O_RDONLY``, or a writer's ``O_WRONLY | O_APPEND | O_CREAT``, …) are opened with
    ``O_NONBLOCK | O_CLOEXEC`` (and ``O_NOFOLLOW`` unless told to follow), so neither a reader nor
    a writer ever waits on a FIFO. The refusals of :func:`read_with_status`: :class:`NotRegular`
    for anything but a regular file (a FIFO a writer finds without a reader included)."""
    flags |= os.O_NONBLOCK | os.O_CLOEXEC
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        descriptor = os.open(path, flags, mode)
    except NotADirectoryError as error:
        raise FileNotFoundError(errno.ENOENT, "a parent is not a directory", os.fspath(path)) from error
    except OSError as error:
        if error.errno == errno.ELOOP and not follow_symlinks:
            raise NotRegular(errno.ELOOP, "is a symlink", os.fspath(path)) from error
        if error.errno in (errno.ENXIO, errno.EISDIR):  # a FIFO with no reader, a directory
            try:
                found = os.stat(path, follow_symlinks=follow_symlinks).st_mode
            except OSError:
                raise error from None
            raise NotRegular(error.errno, f"is {kind_of(found)}, not a regular file", os.fspath(path)) from error
        raise
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise NotRegular(errno.EINVAL, f"is {kind_of(status.st_mode)}, not a regular file", os.fspath(path))
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor, status


def read_with_status(path: str | os.PathLike, limit: int, *,
                     follow_symlinks: bool = True) -> tuple[bytes, os.stat_result]:
    """The whole content of the regular file ``path``, at most ``limit`` bytes, with the
    ``fstat`` of the descriptor it was read from.

    Raises :class:`FileNotFoundError` when absent (or a parent is not a directory),
    :class:`NotRegular` for anything but a regular file (a symlink too when
    ``follow_symlinks`` is False), :class:`TooLarge` past ``limit``, :class:`OSError` otherwise.
    Never blocks on a FIFO."""
    descriptor, status = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        if status.st_size > limit:
            raise TooLarge(errno.EFBIG, f"is {status.st_size} bytes, over the {limit}-byte bound", os.fspath(path))
        chunks = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(_CHUNK, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while we read
                raise TooLarge(errno.EFBIG, f"grew past the {limit}-byte bound", os.fspath(path))
        return b"".join(chunks), status
    finally:
        os.close(descriptor)


def read_after(path: str | os.PathLike, offset: int, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file ``path`` from ``offset`` on, never following a symlink, with
    the ``fstat`` of the descriptor (its inode tells a follower that the file was replaced). A
    remainder over ``limit`` at open is refused (:class:`TooLarge`); one that grows while read
    is cut at ``limit`` (an appender's follower reads the rest next time). The refusals of
    :func:`read_with_status`; an ``offset`` past the end reads ``b""``."""
    descriptor, status = open_regular(path, follow_symlinks=False)
    try:
        if status.st_size - offset > limit:
            raise TooLarge(errno.EFBIG, f"has {status.st_size - offset} bytes past {offset}, over the {limit}-byte bound",
                           os.fspath(path))
        chunks = []
        total = 0
        while total < limit:
            chunk = os.pread(descriptor, min(_CHUNK, limit - total), offset + total)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks), status
    finally:
        os.close(descriptor)


def read_regular(path: str | os.PathLike, limit: int) -> tuple[bytes, int]:
    """``(bytes, permission bits)`` of the regular file at ``path``, never following a symlink
    (the authoring copy keeps modes); the refusals of :func:`read_with_status`."""
    data, status = read_with_status(path, limit, follow_symlinks=False)
    return data, status.st_mode & 0o777


def read_optional(path: str | os.PathLike, limit: int, *, follow_symlinks: bool = True) -> bytes | None:
    """:func:`read_bounded`, but ``None`` when the file is absent."""
    try:
        return read_bounded(path, limit, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        return None


def read_text(path: str | os.PathLike, limit: int, *, follow_symlinks: bool = True) -> str:
    """:func:`read_bounded` decoded as UTF-8 (raises :class:`UnicodeDecodeError`)."""
    return read_bounded(path, limit, follow_symlinks=follow_symlinks).decode("utf-8")
