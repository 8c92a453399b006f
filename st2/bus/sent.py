"""The sender's ledger, read by ``st2 message sent``.

After a message lands in the recipient's inbox, a copy with a ``to:`` line after ``from:`` is
published under the same filename into the sender's ledger: the sender seat's
``resources/sent/`` when the sender is a seat, else ``.st2/sent/<sender>/`` (an operator or a
service). Delivery comes first: a crash between the two loses a ledger line, never a message,
and an idempotent replay completes it. Stream events do not write the ledger.
"""

from __future__ import annotations

import os

from st2.bus import BusError
from st2.bus.addressing import resolve_seat
from st2.bus.envelope import Message
from st2.bus.mailbox import list_box
from st2.bus.publication import ensure_box, publish_exclusive
from st2.catalog.layout import CONTROL_DIR, RESOURCES
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: a click-free send passes str paths and never imports pathlib
    from pathlib import Path

SENT = "sent"


def sent_directory(catalog: Path | str, sender: str) -> Path | str:
    """The sender's ledger directory, of ``catalog``'s kind."""
    try:
        seat = resolve_seat(catalog, sender, for_delivery=False)
    except BusError:
        return like(catalog, os.path.join(catalog, CONTROL_DIR, SENT, sender))
    return like(catalog, os.path.join(seat.directory, RESOURCES, SENT))


def ledger_bytes(message: bytes, recipient: str) -> bytes:
    """The message bytes with ``to: <recipient>`` after the ``from:`` line."""
    head, separator, rest = message.partition(b"\n")  # the opening ---
    from_line, separator2, tail = rest.partition(b"\n")
    return head + separator + from_line + separator2 + f"to: {recipient}\n".encode() + tail


def record(catalog: Path, sender: str, recipient: str, filename: str, message: bytes,
           staging: Path) -> None:
    directory = ensure_box(sent_directory(catalog, sender), catalog)
    # Not fsynced: the ledger is the sender's bookkeeping, and a power cut that loses a line loses
    # no mail (it costs two fsyncs per send otherwise).
    publish_exclusive(os.path.join(directory, filename), ledger_bytes(message, recipient), staging, durable=False)


def row(message: Message, include_body: bool = False) -> dict:
    """A ``message sent --json`` row: the message row with ``to`` after ``ts``."""
    base = message.row(include_body)
    ordered = {"filename": base.pop("filename"), "ts": base.pop("ts"), "to": message.extra.get("to")}
    ordered.update(base)
    return ordered


def list_sent(catalog: Path, sender: str) -> list[Message]:
    return list_box(sent_directory(catalog, sender))
