"""Deterministic reserved filenames for idempotent publication.

Before an idempotent message (a keyed send, a service request or its reply) is published, a
reservation record is created exclusively under a name derived from the key —
``<sha256-hex of the key material>.json`` — holding the message filename chosen for it and the
digest of the exact bytes. Whoever creates the record owns that filename; every concurrent or
crash-replayed attempt finds the record, checks that it carries the same payload (a different one
fails), and finishes the same publication. The bytes are a pure function of the request and the
filename, so every attempt renders the same file and the inbox ends up with exactly one.
"""

from __future__ import annotations

import json
import os

from st2.bus import BusError
from st2.bus.filename import is_message_filename
from st2.bus.mailbox import archive_of, inbox_of, read_raw
from st2.bus.publication import DIRECTORY_MODE, publish_exclusive
from st2.base.digest import sha256
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.records import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path

SCHEMA = "st2.bus-reservation.v1"


def key_digest(*parts: str) -> str:
    """SHA-256 hex over the parts, each length-prefixed so ("ab","c") and ("a","bc") differ."""
    hasher = sha256()
    for part in parts:
        encoded = part.encode("utf-8")
        hasher.update(len(encoded).to_bytes(8, "big"))
        hasher.update(encoded)
    return hasher.hexdigest()


def payload_digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def reserve(record: Path, fields: dict[str, str], candidate_filename: str, staging: Path,
            kind: str) -> tuple[str, bool]:
    """Reserve ``candidate_filename`` for ``fields`` unless a record already exists.

    Return ``(filename, created)``: the reserved filename (the candidate when this call created
    the record) and whether it did. Raise :class:`BusError` when the existing record carries
    different fields (``idempotency key reused with a different <kind>``) or is unreadable —
    an unreadable reservation fails closed rather than publishing a second message.
    """
    os.makedirs(os.path.dirname(os.fspath(record)) or ".", mode=DIRECTORY_MODE, exist_ok=True)
    body = {"schema": SCHEMA, **fields, "filename": candidate_filename}
    data = (json.dumps(body, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
    if publish_exclusive(record, data, staging):
        return candidate_filename, True
    try:
        existing = decoding.load_json(read_bounded(record, RUNTIME_LIMIT, follow_symlinks=False))
    except (OSError, ValueError) as error:
        raise BusError(f"reservation {record} is unreadable ({error}); refusing to publish") from None
    if not isinstance(existing, dict) or existing.get("schema") != SCHEMA:
        raise BusError(f"reservation {record} has a foreign schema; refusing to publish")
    filename = existing.get("filename")
    if not isinstance(filename, str) or not is_message_filename(filename):
        raise BusError(f"reservation {record} names no valid filename; refusing to publish")
    for name, value in fields.items():
        if existing.get(name) != value:
            raise BusError(f"idempotency key reused with a different {kind}")
    return filename, False


def check_existing(record: Path, fields: dict[str, str], kind: str) -> None:
    """Refuse a conflicting reuse before anything else is written (no box is even created).
    :func:`reserve` checks again, since a record may appear in between."""
    existing = read_reservation(record)
    if existing is not None and any(existing.get(name) != value for name, value in fields.items()):
        raise BusError(f"idempotency key reused with a different {kind}")


def read_reservation(record: Path) -> dict | None:
    try:
        existing = decoding.load_json(read_bounded(record, RUNTIME_LIMIT, follow_symlinks=False))
    except (OSError, ValueError):
        return None
    if not isinstance(existing, dict) or existing.get("schema") != SCHEMA:
        return None
    return existing


def deliver_reserved(box_owner: Path, filename: str, data: bytes, staging: Path) -> bool:
    """Make the reserved ``filename`` exist in ``box_owner``'s inbox with ``data`` unless it is
    already settled. Return True when this call published it.

    An archive receipt settles it: the inbox copy is never restored (one published in a race with
    the recipient's archive is removed again). An existing copy with other bytes is refused.
    """
    inbox = inbox_of(box_owner)
    receipt = os.path.join(archive_of(box_owner), filename)
    for existing_path in (receipt, os.path.join(inbox, filename)):
        if os.path.lexists(existing_path):
            _check_same(existing_path, filename, data)
            return False
    created = publish_exclusive(os.path.join(inbox, filename), data, staging)
    if not created:
        _check_same(os.path.join(inbox, filename), filename, data)
        return False
    if os.path.lexists(receipt):
        # The recipient archived another attempt's copy while this one was in flight.
        try:
            os.unlink(os.path.join(inbox, filename))
        except FileNotFoundError:
            pass
        return False
    return True


def _check_same(path: Path, filename: str, data: bytes) -> None:
    existing = read_raw(os.path.dirname(path), filename)
    if existing is not None and existing != data:
        raise BusError(f"message {filename} already exists with different bytes; refusing")
