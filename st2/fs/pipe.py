"""Emptying a non-blocking descriptor (a wake-up pipe, a signal wake-up fd)."""

from __future__ import annotations

import os


def drain(descriptor: int) -> bool:
    """Read the non-blocking ``descriptor`` until nothing is pending; True when anything was
    read. End of file counts as nothing pending."""
    found = False
    try:
        while os.read(descriptor, 4096):
            found = True
    except BlockingIOError:
        pass
    return found
