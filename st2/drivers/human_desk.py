"""The human side of a native wrapper's PTY: the keyboard and its one grammar.
"""

from __future__ import annotations


def keyboard_lines(pending: bytes, data: bytes, limit: int = 64 * 1024) -> tuple[list[str], bytes]:
    """The complete lines typed so far (decoded, stripped) and what is left pending; a pending
    partial line beyond ``limit`` bytes is dropped."""
    pending += data
    lines = []
    while b"\n" in pending:
        raw, pending = pending.split(b"\n", 1)
        lines.append(raw.decode("utf-8", "replace").strip())
    return lines, (b"" if len(pending) > limit else pending)
