"""Declared presence: the ``status`` record (docs/records.md §Status).

Format. Version 1 is two lines, ``<state>\\nv1 <unix-ms>\\n``; the legacy form is one bare word
(with or without a newline). ``<state>`` is one of the settable words; ``unknown`` is derived by
readers and never written.

Reading, in order (:func:`read`, pure):

=============================================  ===========================================
evidence                                       presence
=============================================  ===========================================
no file (``data is None``)                     ``offline``
first line not a state word (incl. non-UTF-8)  ``offline`` (corrupt contents are not trusted)
first line the literal ``unknown``             ``unknown``
a second line that is not exactly ``v1 <ms>``  ``unknown`` (malformed; never falls back to mtime)
v1 stamp more than 60 s in the future          ``unknown``
v1 stamp at least 15 min old                   ``unknown``
legacy word, no mtime given                    ``unknown``
legacy word, mtime at least 15 min old/skewed  ``unknown`` (the only read that uses mtime)
otherwise                                      the recorded word
=============================================  ===========================================

Writing (:func:`write`, :func:`refresh`) publishes version 1 atomically, staged in the catalog
control plane, under ``.status.lock``. The stamp is strictly monotonic per record, so every
landed write is byte-distinct. The reader imports only the standard library.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path

from st2.catalog import layout
from st2.fs.read import RECORD_LIMIT, read_with_status

STATUS_STALE_MS = 15 * 60 * 1000
"""A v1 heartbeat (or legacy mtime) at least this old reads ``unknown``."""
STATUS_REFRESH_MS = 5 * 60 * 1000
"""How often a live session's wrapper refreshes the record: two missed refreshes before stale."""
STATUS_FUTURE_SKEW_MS = 60 * 1000
"""A stamp further than this ahead of the reader's clock is untrusted and reads ``unknown``."""

RECORD_NAME = layout.STATUS
STAGING_NAME = "status-staging"
VERSION_PREFIX = "v1 "

OFFLINE, AVAILABLE, BUSY, AWAY, DND, UNKNOWN = "offline", "available", "busy", "away", "dnd", "unknown"
SETTABLE: tuple[str, ...] = (OFFLINE, AVAILABLE, BUSY, AWAY, DND)
PRESENCES: tuple[str, ...] = (AVAILABLE, BUSY, AWAY, DND, OFFLINE, UNKNOWN)

# Forms of the bytes on disk.
FORM_MISSING = "missing"
FORM_LEGACY = "legacy"
FORM_VERSION1 = "v1"
FORM_LITERAL_UNKNOWN = "literal-unknown"
FORM_INVALID_STATE = "invalid-state"
FORM_MALFORMED = "malformed"


@dataclass(frozen=True)
class StatusReading:
    """What a reader projects. ``reason`` names the derivation that produced ``unknown``."""

    presence: str
    form: str
    recorded: str | None = None
    written_at_ms: int | None = None
    reason: str | None = None


@dataclass(frozen=True)
class _Parsed:
    form: str
    state: str | None = None
    written_at_ms: int | None = None


def _parse(data: bytes) -> _Parsed:
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        # The original reads the file as text and treats a failed read as offline.
        return _Parsed(FORM_INVALID_STATE)
    has_final_newline = raw.endswith("\n")
    body = raw[:-1] if has_final_newline else raw
    lines = body.split("\n")
    first = lines[0]
    if first == UNKNOWN:
        return _Parsed(FORM_LITERAL_UNKNOWN)
    if first not in SETTABLE:
        return _Parsed(FORM_INVALID_STATE)
    if len(lines) == 1:
        return _Parsed(FORM_LEGACY, first)
    if not has_final_newline or len(lines) != 2:
        return _Parsed(FORM_MALFORMED, first)
    version_line = lines[1]
    if not version_line.startswith(VERSION_PREFIX):
        return _Parsed(FORM_MALFORMED, first)
    digits = version_line[len(VERSION_PREFIX):]
    # ASCII digits only: str.isdigit would admit other scripts' digits.
    if not digits or not all("0" <= character <= "9" for character in digits):
        return _Parsed(FORM_MALFORMED, first)
    stamp = int(digits)
    if stamp > 2**64 - 1:
        return _Parsed(FORM_MALFORMED, first)
    return _Parsed(FORM_VERSION1, first, stamp)


def _freshness(written_at_ms: int, now_ms: int) -> str | None:
    """The reason a stamp is untrusted, or None when it is fresh."""
    if written_at_ms > now_ms:
        return "future-skew" if written_at_ms - now_ms > STATUS_FUTURE_SKEW_MS else None
    if now_ms - written_at_ms >= STATUS_STALE_MS:
        return "stale"
    return None


def read(data: bytes | None, now_ms: int, mtime_ms: int | None = None) -> StatusReading:
    """Project presence from the record's bytes at ``now_ms``. ``mtime_ms`` is consulted only for
    a legacy one-word record. Never raises."""
    if data is None:
        return StatusReading(OFFLINE, FORM_MISSING, reason="missing")
    parsed = _parse(data)
    if parsed.form == FORM_INVALID_STATE:
        return StatusReading(OFFLINE, parsed.form, reason="invalid-state")
    if parsed.form in (FORM_LITERAL_UNKNOWN, FORM_MALFORMED):
        return StatusReading(UNKNOWN, parsed.form, parsed.state, reason=parsed.form)
    if parsed.form == FORM_LEGACY:
        if mtime_ms is None:
            return StatusReading(UNKNOWN, parsed.form, parsed.state, reason="no-mtime")
        stamp = mtime_ms
    else:
        stamp = parsed.written_at_ms
    untrusted = _freshness(stamp, now_ms)
    if untrusted is not None:
        return StatusReading(UNKNOWN, parsed.form, parsed.state, stamp, untrusted)
    return StatusReading(parsed.state, parsed.form, parsed.state, stamp)


def activity_time_ms(data: bytes | None, now_ms: int, mtime_ms: int | None = None) -> int | None:
    """The stamp this record contributes to ``agents --enrich``'s ``lastActivity``: the v1 stamp
    (a stamp within the future-skew bound is clamped to ``now_ms``), the legacy mtime, or None
    for a missing, invalid or untrustworthy record."""
    if data is None:
        return None
    parsed = _parse(data)
    if parsed.form == FORM_VERSION1:
        stamp = parsed.written_at_ms
    elif parsed.form == FORM_LEGACY:
        stamp = mtime_ms
    else:
        return None
    if stamp is None:
        return None
    if stamp > now_ms:
        return now_ms if stamp - now_ms <= STATUS_FUTURE_SKEW_MS else None
    return stamp


def load(path: Path) -> tuple[bytes | None, int | None]:
    """Return the file's bytes and mtime in ms (None, None when absent). An unreadable file is
    returned as empty bytes, which reads ``offline`` like the original's failed read."""
    try:
        data, status = read_with_status(path, RECORD_LIMIT, follow_symlinks=False)
        mtime_ms = status.st_mtime_ns // 1_000_000
    except FileNotFoundError:
        return None, None
    except OSError:
        return b"", None
    return data, mtime_ms


def read_file(path: Path, now_ms: int) -> StatusReading:
    """:func:`read` applied to a file on disk."""
    data, mtime_ms = load(path)
    return read(data, now_ms, mtime_ms)


# --- writer -------------------------------------------------------------------------------------


class RefreshOutcome(str, enum.Enum):
    REFRESHED = "refreshed"
    UPGRADED_DND = "upgraded-dnd"
    WROTE_DEFAULT = "wrote-default"
    LEFT_DND = "left-dnd"
    LEFT_UNKNOWN = "left-unknown"
    LEFT_CORRUPT = "left-corrupt"


def encode(presence: str, written_at_ms: int) -> bytes:
    """The version 1 bytes. Refuses ``unknown`` and any other non-settable word."""
    if presence not in SETTABLE:
        raise ValueError(f"{presence!r} cannot be set (settable: {', '.join(SETTABLE)})")
    return f"{presence}\n{VERSION_PREFIX}{written_at_ms}\n".encode()


def _next_stamp(previous: _Parsed | None, now_ms: int) -> int:
    """Strictly beyond a trusted on-disk v1 stamp, so a landed write always changes the bytes; a
    stamp beyond the future-skew bound is never inherited (the writer's clock wins)."""
    if previous is not None and previous.form == FORM_VERSION1 and previous.written_at_ms is not None:
        if previous.written_at_ms <= now_ms + STATUS_FUTURE_SKEW_MS:
            return max(now_ms, previous.written_at_ms + 1)
    return now_ms


def _publish(seat_dir: Path, data: bytes) -> None:
    from st2.records.placement import publish_record

    publish_record(seat_dir, RECORD_NAME, data, STAGING_NAME)


def _locked(seat_dir: Path):
    from st2.fs.lock import record_lock

    return record_lock(Path(seat_dir) / RECORD_NAME)


def write(seat_dir: Path, presence: str, clock) -> bytes:
    """Set a seat's declared presence. Returns the bytes published. Raises ValueError for a word
    that cannot be set (``unknown`` included) and UnsafePublication for an unsafe seat path."""
    seat_dir = Path(seat_dir)
    encode(presence, 0)  # validate before taking the lock
    with _locked(seat_dir):
        data, _ = load(seat_dir / RECORD_NAME)
        previous = _parse(data) if data is not None else None
        published = encode(presence, _next_stamp(previous, clock.wall_ms()))
        _publish(seat_dir, published)
    return published


def refresh(seat_dir: Path, clock) -> RefreshOutcome:
    """Refresh a live seat's heartbeat, preserving its declared word.

    Missing writes ``available``. A v1 non-DND record is re-stamped (always byte-distinct). A v1
    DND record is left to age out: an abandoned hold must expire. A legacy DND record is upgraded
    once to v1 carrying its old mtime as the stamp, so the upgrade does not renew the hold. Any
    other legacy word is upgraded with the current time. ``unknown`` and corrupt records are left
    untouched."""
    seat_dir = Path(seat_dir)
    with _locked(seat_dir):
        data, mtime_ms = load(seat_dir / RECORD_NAME)
        now_ms = clock.wall_ms()
        if data is None:
            _publish(seat_dir, encode(AVAILABLE, now_ms))
            return RefreshOutcome.WROTE_DEFAULT
        parsed = _parse(data)
        if parsed.form == FORM_LITERAL_UNKNOWN:
            return RefreshOutcome.LEFT_UNKNOWN
        if parsed.form in (FORM_INVALID_STATE, FORM_MALFORMED):
            return RefreshOutcome.LEFT_CORRUPT
        if parsed.form == FORM_VERSION1:
            if parsed.state == DND:
                return RefreshOutcome.LEFT_DND
            _publish(seat_dir, encode(parsed.state, _next_stamp(parsed, now_ms)))
            return RefreshOutcome.REFRESHED
        if parsed.state == DND:
            if mtime_ms is None:
                return RefreshOutcome.LEFT_DND
            _publish(seat_dir, encode(DND, mtime_ms))
            return RefreshOutcome.UPGRADED_DND
        _publish(seat_dir, encode(parsed.state, now_ms))
        return RefreshOutcome.REFRESHED
