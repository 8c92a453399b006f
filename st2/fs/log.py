"""Appending one line to an advisory log: the one primitive behind the delegation stop log and the
usage sample history. Standard library only (both writers are hot paths)."""

from __future__ import annotations

import os

LOG_MODE = 0o600  # st2's logs, like its host-local records, are the owner's alone


def append_line(path: str, text: str) -> bool:
    """Append ``text`` (one line, its newline included) to the log at ``path`` in one
    ``O_APPEND`` write — concurrent writers never interleave inside a line — creating the file
    (owner-only) and its directory if needed. Fail-soft: False when it could not be written, so
    an advisory log never changes a caller's verdict."""
    try:
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, LOG_MODE)
        try:
            os.write(descriptor, text.encode("utf-8"))
        finally:
            os.close(descriptor)
        return True
    except OSError:
        return False
