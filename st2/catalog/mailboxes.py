"""Whether a seat's or principal's mailbox directories are real: ``resources``,
``resources/inbox`` and ``resources/archive`` must each be a directory, never a symlink (mail
would be read from or written out of the catalog). Send and archive refuse such a box
(:func:`st2.bus.publication.ensure_box`); validate and doctor name it first. Standard library only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from st2.catalog.layout import ARCHIVE, INBOX, RESOURCES

BOXES = (RESOURCES, f"{RESOURCES}/{INBOX}", f"{RESOURCES}/{ARCHIVE}")


def unsafe_mailbox(directory: Path) -> tuple[str, str] | None:
    """``(relative path, what it is)`` of the first mailbox directory under ``directory`` that
    exists and is not a real directory, or None (a missing box is fine: it is created on use)."""
    for relative in BOXES:
        try:
            mode = os.lstat(Path(directory) / relative).st_mode
        except OSError:
            continue
        if not stat.S_ISDIR(mode):
            return relative, "a symlink" if stat.S_ISLNK(mode) else "not a directory"
    return None
