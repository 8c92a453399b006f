"""Sending mail: ``st2 message send`` and ``reply``.

Everything untrusted is validated and the recipient resolved before the first write. A plain send
picks a fresh ``<unix-ms>-<rand6>.md`` and publishes it exclusively into the recipient's inbox. A
send with an idempotency key first reserves a filename for ``(recipient, sender, key)`` under the
recipient's ``resources/message-receipts/`` and then publishes that one file, so any number of
concurrent or crash-replayed sends yield exactly one message; the same key with another message
fails. Then the sender's ledger gets its line.
"""

from __future__ import annotations

import os
from collections import namedtuple

from st2.bus import BusError, sent
from st2.bus.addressing import Seat
from st2.bus.envelope import check_header_text, render
from st2.bus.filename import new_filename
from st2.bus.mailbox import archive_of, inbox_of
from st2.bus.publication import ensure_box, publish_exclusive, staging_directory
from st2.bus.reservation import check_existing, deliver_reserved, key_digest, payload_digest, reserve
from st2.catalog.layout import RESOURCES
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.fs.atomic import sweep_orphans

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path

MESSAGE_RECEIPTS = "message-receipts"
MAX_KEY_CHARS = 256
_ATTEMPTS = 8


class SendReceipt(namedtuple("SendReceipt", ("recipient", "filename", "created"))):
    """What a send did (a namedtuple class, not a dataclass: importing dataclasses costs a send
    milliseconds)."""

    __slots__ = ()
    recipient: str
    filename: str
    created: bool

    def json_row(self) -> dict:
        """``message send --json``: recipient, filename, receiptId, outcome."""
        return {
            "recipient": self.recipient,
            "filename": self.filename,
            "receiptId": self.filename,
            "outcome": "created" if self.created else "deduplicated",
        }


def check_key(label: str, key: str) -> None:
    check_header_text(label, key, MAX_KEY_CHARS)


def send(
    catalog: Path,
    recipient: Seat,
    *,
    sender: str,
    body: str,
    subject: str | None = None,
    in_reply_to: str | None = None,
    tags: tuple[str, ...] = (),
    priority: str | None = None,
    idempotency_key: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
    ledger: bool = True,
) -> SendReceipt:
    """Deliver one message to ``recipient`` and record it in the sender's ledger.

    Raise :class:`BusError` (with nothing written) for a hostile or oversize field or key."""
    data = render(sender, subject, in_reply_to, tags, priority, body)
    if idempotency_key is not None:
        check_key("idempotency key", idempotency_key)
    if idempotency_key is not None:
        receipts = os.path.join(recipient.directory, RESOURCES, MESSAGE_RECEIPTS)
        record = os.path.join(receipts, f"{key_digest(recipient.bus_id, sender, idempotency_key)}.json")
        fields = {
            "idempotencyKey": idempotency_key,
            "from": sender,
            "to": recipient.bus_id,
            "payloadSha256": payload_digest(data),
        }
        check_existing(record, fields, "message")
    staging = staging_directory(catalog)
    sweep_orphans(staging)
    inbox = ensure_box(inbox_of(recipient.directory), catalog)
    if idempotency_key is None:
        filename = _publish_fresh(recipient.directory, inbox, data, staging, clock)
        created = True
    else:
        ensure_box(receipts, catalog)
        filename, created = reserve(
            record, fields, fresh_filename(recipient.directory, clock), staging, "message"
        )
        deliver_reserved(recipient.directory, filename, data, staging)
    if ledger:
        sent.record(catalog, sender, recipient.bus_id, filename, data, staging)
    return SendReceipt(recipient=recipient.bus_id, filename=filename, created=created)


def fresh_filename(seat_directory: Path, clock: Clock) -> str:
    """A new ``<now-ms>-<rand6>.md`` that neither of the seat's boxes holds yet (publication is
    still exclusive: a name taken in between makes the link fail, never overwrite)."""
    for _ in range(_ATTEMPTS):
        filename = new_filename(clock.wall_ms())
        if not os.path.exists(os.path.join(archive_of(seat_directory), filename)) and not os.path.exists(
            os.path.join(inbox_of(seat_directory), filename)
        ):
            return filename
    raise BusError(f"could not allocate a fresh message filename for {seat_directory}")


def _publish_fresh(seat_directory: Path, inbox: Path, data: bytes, staging: Path,
                   clock: Clock) -> str:
    for _ in range(_ATTEMPTS):
        filename = fresh_filename(seat_directory, clock)
        if publish_exclusive(os.path.join(inbox, filename), data, staging):
            return filename
    raise BusError(f"could not allocate a fresh message filename in {inbox}")
