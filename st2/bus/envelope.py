"""A message file's contents: front matter between ``---`` lines, then a markdown body.

Front matter keys, in the order they are written: ``from``, ``subject``, ``in-reply-to``,
``tags`` (comma-separated, written ``a, b``), ``priority`` (low/normal/high). Readers are
permissive — a file without front matter is all body with no sender — and ignore keys they do not
know, so a peer that adds one does not break us.

Subjects, senders and tags are untrusted. :func:`check_fields` refuses, before anything is written,
every value that could forge a front-matter line or the closing delimiter (newlines, ``---``),
any control character (C0, C1, DEL, Unicode line/paragraph separators, bidi overrides), values
the reader could not give back exactly (leading or trailing whitespace), and oversize values.
Standard library only.
"""

from __future__ import annotations

import unicodedata
from collections import namedtuple

from st2.bus import BusError
from st2.bus.filename import is_message_filename, timestamp_of

PRIORITIES = ("low", "normal", "high")
MAX_MESSAGE_BYTES = 1024 * 1024  # a whole rendered file; mail is a note, not a transfer channel
MAX_SUBJECT_CHARS = 1000
MAX_SENDER_CHARS = 256
MAX_TAG_CHARS = 64
MAX_TAGS = 32
# Bidi embedding/override/isolate controls reorder what a terminal shows; a subject is displayed.
_BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})


class Message(namedtuple("Message", ("filename", "ts", "sender", "subject", "in_reply_to", "tags", "priority",
                                     "body", "extra"))):
    """One parsed message. ``None`` means the front matter does not carry the key, which is not
    the same as an empty value. ``extra`` holds the keys this reader does not know; it is not
    compared or hashed. (A namedtuple class, not a dataclass: a send imports this module, and
    dataclasses cost it milliseconds.)"""

    __slots__ = ()
    filename: str
    ts: int
    sender: str | None
    subject: str | None
    in_reply_to: str | None
    tags: tuple[str, ...]
    priority: str | None
    body: str
    extra: dict[str, str]

    def __new__(cls, filename: str, ts: int, sender: str | None = None, subject: str | None = None,
                in_reply_to: str | None = None, tags: tuple[str, ...] = (), priority: str | None = None,
                body: str = "", extra: dict[str, str] | None = None) -> Message:
        return super().__new__(cls, filename, ts, sender, subject, in_reply_to, tags, priority, body,
                               {} if extra is None else extra)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self[:-1] == other[:-1]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self[:-1])

    def row(self, include_body: bool = False) -> dict:
        """The ``message ls --json`` row: filename, ts, from, subject, inReplyTo, tags, priority
        and, only when asked for, body (omitted, not null, otherwise)."""
        row = {
            "filename": self.filename,
            "ts": self.ts,
            "from": self.sender,
            "subject": self.subject,
            "inReplyTo": self.in_reply_to,
            "tags": list(self.tags),
            "priority": self.priority,
        }
        if include_body:
            row["body"] = self.body
        return row


def control_character_in(value: str) -> str | None:
    """The first character of ``value`` that may never pass into a header, or None."""
    for character in value:
        if unicodedata.category(character) in _REFUSED_CATEGORIES or character in _BIDI_CONTROLS:
            return character
    return None


def shown(value: str | None, *, multiline: bool = False) -> str:
    """``value`` safe to print to a terminal: every character :func:`check_header_text` would
    refuse is shown as an escape (``\\x1b``), so a message file written into an inbox by
    something other than st2 cannot drive the reader's terminal. ``multiline`` keeps newlines
    and tabs (a body)."""
    if value is None:
        return ""
    out = []
    for character in value:
        if multiline and character in "\n\t":
            out.append(character)
        elif unicodedata.category(character) in _REFUSED_CATEGORIES or character in _BIDI_CONTROLS:
            code = ord(character)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(character)
    return "".join(out)


def check_header_text(label: str, value: str, max_chars: int, *, allow_empty: bool = False) -> None:
    """Raise :class:`BusError` unless ``value`` can be one front-matter value, exactly."""
    if not isinstance(value, str):
        raise BusError(f"{label} must be text")
    if not value and not allow_empty:
        raise BusError(f"{label} must not be empty")
    bad = control_character_in(value)
    if bad is not None:
        raise BusError(f"{label} contains a control character (U+{ord(bad):04X}); refused")
    if "---" in value:
        raise BusError(f"{label} contains '---', which could forge a front-matter delimiter; refused")
    if value != value.strip():
        raise BusError(f"{label} has leading or trailing whitespace; refused")
    if len(value) > max_chars:
        raise BusError(f"{label} is {len(value)} characters; the limit is {max_chars}")


def check_name(label: str, value: str, max_chars: int = MAX_SENDER_CHARS) -> None:
    """A name that may end up in a path (sender, identity, stream, principal): header-safe, and
    no ``/``, no ``..``, no NUL."""
    if isinstance(value, str) and ("\x00" in value):
        raise BusError(f"{label} contains NUL; refused")
    check_header_text(label, value, max_chars)
    if "/" in value or ".." in value or value in (".",):
        raise BusError(f"{label} {value!r} contains '/' or '..'; refused")
    if any(character.isspace() for character in value):
        raise BusError(f"{label} {value!r} contains whitespace; refused")


def check_fields(
    sender: str,
    subject: str | None,
    in_reply_to: str | None,
    tags: tuple[str, ...] | list[str],
    priority: str | None,
) -> None:
    """Refuse any untrusted front-matter value; see the module docstring."""
    check_name("sender", sender)
    if subject is not None:
        check_header_text("subject", subject, MAX_SUBJECT_CHARS, allow_empty=True)
    if in_reply_to is not None and not is_message_filename(in_reply_to):
        raise BusError(f"in-reply-to {in_reply_to!r} is not a message filename")
    if len(tags) > MAX_TAGS:
        raise BusError(f"{len(tags)} tags; the limit is {MAX_TAGS}")
    for tag in tags:
        check_header_text("tag", tag, MAX_TAG_CHARS)
        if "," in tag:
            raise BusError(f"tag {tag!r} contains ','; tags are comma-separated")
    if priority is not None and priority not in PRIORITIES:
        raise BusError(f"priority {priority!r} is not one of {', '.join(PRIORITIES)}")


def render(
    sender: str,
    subject: str | None,
    in_reply_to: str | None,
    tags: tuple[str, ...] | list[str],
    priority: str | None,
    body: str,
) -> bytes:
    """Validate and render a message file. The body gains a final newline when it lacks one.
    Raise :class:`BusError` for a hostile field or an oversize result."""
    check_fields(sender, subject, in_reply_to, tags, priority)
    lines = ["---", f"from: {sender}"]
    if subject is not None:
        lines.append(f"subject: {subject}")
    if in_reply_to is not None:
        lines.append(f"in-reply-to: {in_reply_to}")
    if tags:
        lines.append(f"tags: {', '.join(tags)}")
    if priority is not None:
        lines.append(f"priority: {priority}")
    lines.append("---")
    text = "\n".join(lines) + "\n" + body
    if not body.endswith("\n"):
        text += "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise BusError(f"message body is not valid text: {error.reason}") from None
    if len(data) > MAX_MESSAGE_BYTES:
        raise BusError(
            f"message is {len(data)} bytes; the limit is {MAX_MESSAGE_BYTES} bytes "
            "(put large content in a file and send its path)"
        )
    return data


def parse(filename: str, data: bytes | str) -> Message:
    """Parse a message file. Never raises: missing or unterminated front matter yields the whole
    file as body with no sender; undecodable bytes are replaced."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    ts = timestamp_of(filename)
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        return Message(filename=filename, ts=ts, body=text)
    closing = next(
        (index for index in range(1, len(lines)) if lines[index].rstrip("\r") == "---"), None
    )
    if closing is None:
        return Message(filename=filename, ts=ts, body=text)
    values: dict[str, str] = {}
    for line in lines[1:closing]:
        key, separator, value = line.partition(":")
        if separator:
            values[key.strip()] = value.strip()
    tags = tuple(tag.strip() for tag in values.get("tags", "").split(",") if tag.strip())
    known = {"from", "subject", "in-reply-to", "tags", "priority"}
    return Message(
        filename=filename,
        ts=ts,
        sender=values.get("from"),
        subject=values.get("subject"),
        in_reply_to=values.get("in-reply-to"),
        tags=tags,
        priority=values.get("priority"),
        body="\n".join(lines[closing + 1 :]),
        extra={key: value for key, value in values.items() if key not in known},
    )


def reply_subject(original: str | None) -> str | None:
    """``re: <original>`` unless it already starts with a case-insensitive ``re:``."""
    if original is None:
        return None
    if original.lstrip()[:3].lower() == "re:":
        return original
    return f"re: {original}"
