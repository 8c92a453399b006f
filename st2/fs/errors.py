"""One line for an OS error no verb handled (disk full, inodes exhausted, read-only, quota, a
path the machine refused): the verb, the operation, the path, the reason. Standard library only,
so the click CLI and the click-free verbs (:mod:`st2.front.verbs`) print the same line."""

from __future__ import annotations

import errno

EXIT_OS_ERROR = 74  # EX_IOERR: the machine refused (disk full, inodes exhausted, read-only, quota)

WRITE_ERRNOS = frozenset((errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO))


def errno_name(number: int | None) -> str:
    return errno.errorcode.get(number, "") if number is not None else ""


def os_error_line(words: list[str], error: OSError) -> str:
    """The line for ``error`` raised by the verb ``words`` (the argv after ``st2``)."""
    verb = " ".join(word for word in words[:2] if not word.startswith("-")) or "st2"
    name = errno_name(error.errno)
    reason = f"{error.strerror or error}{f' ({name})' if name else ''}"
    if error.filename is not None and error.filename2 is not None:
        return f"st2 {verb}: cannot rename {error.filename} to {error.filename2}: {reason}"
    operation = "cannot write" if error.errno in WRITE_ERRNOS else "cannot access"
    where = f" {error.filename}" if error.filename is not None else ""
    return f"st2 {verb}: {operation}{where}: {reason}"
