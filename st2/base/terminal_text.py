"""Text safe to print to a terminal: the one escaping rule for names, diagnostics, records and
log lines that st2 prints. Standard library only; hot paths import it."""

from __future__ import annotations


def escaped(text: str) -> str:
    """``text`` with every non-printable character (C0/C1 controls, DEL, line and paragraph
    separators, bidi overrides and other format characters) as its backslash escape (``\\x1b``,
    ``\\u202e``); printable text unchanged, so an escape sequence in a name can never drive the
    reader's terminal."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
