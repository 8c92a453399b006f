"""The DING notice: one printable line per unread message (docs/delivery.md §Notice).

``[DING] new st2 message: [id:<rand6>] <subject> (from <sender>); check your inbox``

A stream event (:mod:`st2.bus.stream`: the tags ``st2-stream`` and ``stream:<name>``, sent from
``stream:<name>``) is stream work, not mail, and its notice says so in words every screen grammar
keeps (the shell grammar's inert comment included):

``[DING] st2-stream work on stream <name>: [id:<rand6>] <subject>; check your inbox``

Subject and sender are untrusted. Every control character, escape sequence and whitespace run
becomes at most one ordinary space, so no field can carry a bracketed-paste terminator
(``ESC[201~``), a newline that would submit early, or a cursor movement out of the single paste
frame. The subject is bounded to 160 characters and the sender to 80; empty fields read
``(no subject)`` and ``unknown``. The id and the closing instruction are never truncated: an
agent keys on the ``[DING]`` prefix and the id. Standard library only.
"""

from __future__ import annotations

import unicodedata

from st2.bus.filename import is_message_filename, message_id_of
from st2.bus import STREAM_SENDER_PREFIX, STREAM_TAG

SUBJECT_MAX_CHARS = 160
SENDER_MAX_CHARS = 80
NO_SUBJECT = "(no subject)"
UNKNOWN_SENDER = "unknown"
BACKLOG_NOTICE = "[DING] unread st2 messages remain; check your inbox"
NOTICE_PREFIX = "[DING] "
STREAM_MAX_CHARS = 64
PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"

# Characters that never survive into a notice: C0/C1 controls and DEL (Cc), format characters
# such as bidi overrides and zero-width joiners (Cf), surrogates, private use, unassigned, and
# line/paragraph separators. Whitespace of any kind becomes a separator instead.
_DROPPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_sequence_end(text: str, start: int) -> int:
    """Index just past the escape sequence starting at ``text[start] == ESC`` (ECMA-48: CSI
    ``ESC [ params intermediates final``, OSC/DCS/PM/APC/SOS strings ended by BEL or ST, and
    two-character escapes). An unterminated sequence swallows the rest of the field, so no
    half-sequence can leak."""
    if start + 1 >= len(text):
        return len(text)
    kind = text[start + 1]
    if kind == "[":
        index = start + 2
        while index < len(text) and "\x30" <= text[index] <= "\x3f":
            index += 1
        while index < len(text) and "\x20" <= text[index] <= "\x2f":
            index += 1
        if index < len(text) and "\x40" <= text[index] <= "\x7e":
            return index + 1
        return index
    if kind in "]PX^_":
        index = start + 2
        while index < len(text):
            if text[index] == "\x07":
                return index + 1
            if text[index] == "\x1b" and index + 1 < len(text) and text[index + 1] == "\\":
                return index + 2
            index += 1
        return len(text)
    return start + 2


def normalize_line(value: str) -> str:
    """``value`` as one printable line: escape sequences removed, controls dropped, each run of
    whitespace (and each removed sequence) collapsed to one space, no leading/trailing space."""
    pieces: list[str] = []
    pending_space = False
    index = 0
    while index < len(value):
        character = value[index]
        if character == "\x1b":
            index = _escape_sequence_end(value, index)
            pending_space = bool(pieces)
            continue
        index += 1
        if character.isspace():
            pending_space = bool(pieces)
            continue
        if unicodedata.category(character) in _DROPPED_CATEGORIES:
            pending_space = bool(pieces)
            continue
        if pending_space:
            pieces.append(" ")
            pending_space = False
        pieces.append(character)
    return "".join(pieces)


def normalize_field(value: str | None, fallback: str, max_chars: int) -> str:
    """One bounded, normalized untrusted field; ``fallback`` when nothing printable is left."""
    bounded = normalize_line(value or "")[:max_chars].rstrip(" ")
    return bounded or fallback


def notice_id(filename: str) -> str:
    """The ``<rand6>`` of a ``<unix-ms>-<rand6>.md`` filename; the normalized stem otherwise."""
    if is_message_filename(filename):
        return message_id_of(filename)
    stem = filename[:-3] if filename.endswith(".md") else filename
    return normalize_field(stem, "?", 32)


def notice_text(filename: str, subject: str | None, sender: str | None) -> str:
    """The notice for one message."""
    return (f"{NOTICE_PREFIX}new st2 message: [id:{notice_id(filename)}] "
            f"{normalize_field(subject, NO_SUBJECT, SUBJECT_MAX_CHARS)} "
            f"(from {normalize_field(sender, UNKNOWN_SENDER, SENDER_MAX_CHARS)}); check your inbox")


def stream_of(sender: str | None, tags: tuple[str, ...]) -> str | None:
    """The stream a message is work from, or None for mail: it carries ``st2-stream`` and exactly
    one ``stream:<name>`` tag, and its sender is that same ``stream:<name>`` (a mail sender that
    only adds the tags stays mail)."""
    if STREAM_TAG not in tags:
        return None
    named = [tag for tag in tags if tag.startswith(STREAM_SENDER_PREFIX)]
    if len(named) != 1 or sender != named[0]:
        return None
    name = named[0][len(STREAM_SENDER_PREFIX):]
    return name if name and normalize_line(name) == name and " " not in name else None


def stream_notice_text(filename: str, subject: str | None, stream: str) -> str:
    """The notice for one stream event on ``stream``."""
    return (f"{NOTICE_PREFIX}st2-stream work on stream {normalize_field(stream, '?', STREAM_MAX_CHARS)}: "
            f"[id:{notice_id(filename)}] {normalize_field(subject, NO_SUBJECT, SUBJECT_MAX_CHARS)}; "
            "check your inbox")


def message_notice(filename: str, subject: str | None, sender: str | None, tags: tuple[str, ...] = ()) -> str:
    """The notice one unread message gets: stream work reads as such, anything else as mail."""
    stream = stream_of(sender, tags)
    if stream is not None:
        return stream_notice_text(filename, subject, stream)
    return notice_text(filename, subject, sender)


# What may stay in a notice typed into a shell's line editor. Everything else (``; & | < > $ `
# \\ ' " * ? ~ { } ! ^ #`` and the rest) becomes a space, so no word of a subject or sender can
# end the comment in a shell that does not treat ``#`` as one (zsh without interactivecomments
# then only fails to find a command named ``#``), start a substitution, a redirection, a glob,
# a history expansion or a second command.
_SHELL_INERT_PUNCTUATION = frozenset(" ._,:@+=/-%[]()")


def shell_comment(text: str) -> str:
    """``text`` as an inert shell comment line: ``# `` then ``text`` with every character a
    shell would interpret replaced by a space (runs collapsed). Typing it and pressing Return
    in sh, bash, zsh or fish runs nothing."""
    kept = "".join(character if character.isalnum() or character in _SHELL_INERT_PUNCTUATION else " "
                   for character in normalize_line(text))
    return "# " + " ".join(kept.split())


def paste_frame(text: str) -> str:
    """The single bracketed-paste frame for ``text`` (normalized again, so a caller cannot put a
    terminator inside it by mistake)."""
    return f"{PASTE_START}{normalize_line(text)}{PASTE_END}"
