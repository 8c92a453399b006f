"""The message filename grammar: ``<unix-ms>-<rand6>.md``.

st2 generates ``rand6`` from the 32-letter alphabet ``0123456789abcdefghjkmnpqrstvwxyz``
(Crockford base32, no i/l/o/u); readers accept the whole ``[0-9a-z]{6}`` grammar so a peer's
message using i, l, o or u is never dropped. The millisecond prefix is 13 digits (the frozen
wire grammar), so names sort chronologically as strings. Standard library only.
"""

from __future__ import annotations

import os
import re

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
SUFFIX = ".md"
_GRAMMAR = re.compile(r"[0-9]{13}-[0-9a-z]{6}\.md")


def random_suffix() -> str:
    """Six letters drawn uniformly from :data:`ALPHABET`: the low five bits of each random byte
    (256 is a multiple of 32, so there is no modulo bias). ``os.urandom`` rather than
    :mod:`secrets`, whose imports cost every CLI call ~14 ms."""
    return "".join(ALPHABET[byte & 31] for byte in os.urandom(6))


def new_filename(now_ms: int) -> str:
    """A fresh filename stamped ``now_ms``. Raise ValueError for a stamp outside 13 digits."""
    if not 10**12 <= now_ms < 10**13:
        raise ValueError(f"timestamp {now_ms} does not fit the 13-digit message grammar")
    return f"{now_ms}-{random_suffix()}{SUFFIX}"


def is_message_filename(name: str) -> bool:
    """True when ``name`` matches ``^[0-9]{13}-[0-9a-z]{6}\\.md$`` exactly."""
    return _GRAMMAR.fullmatch(name) is not None


def timestamp_of(name: str) -> int:
    """The send time in unix ms from a grammatical filename's prefix (0 when it has none)."""
    head, _, _ = name.partition("-")
    return int(head) if head.isdigit() else 0


def message_id_of(name: str) -> str:
    """The ``rand6`` part — the stable ``[id:…]`` DING shows for this message."""
    return name[14:20] if is_message_filename(name) else ""
