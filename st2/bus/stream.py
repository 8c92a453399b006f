"""Stream ingress: ``st2 event emit`` with a bounded receipt ring per stream.

A seat accepts events only on a stream its declaration names (``stream "<name>" { … }``) and
only while its desired state is running. Each (stream, event-id) gets one canonical filename,
remembered in a ring of the last :data:`RING_CAPACITY` receipts kept at
``.st2/streams/<host>/<identity>/<stream>.json`` (host-local control plane; emits are serialized
per stream by its record lock). Within the ring a replay — concurrent or after a crash — finishes
the same publication, and the same id with other content fails. An id evicted from the ring is
honestly new: no inbox or archive history is searched, so the state stays bounded.

``--supersede`` archives, through ordinary archive semantics, the latest earlier receipt with the
same ``--key`` or, without a key, the stream-wide head. Events do not write the sent ledger; they
carry the tags ``st2-stream`` and ``stream:<name>`` so DING can mark them as stream work.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from st2.bus import STREAM_SENDER_PREFIX, STREAM_TAG, BusError
from st2.bus.addressing import Seat
from st2.bus.envelope import check_header_text, check_name, render
from st2.bus.filename import is_message_filename
from st2.bus.mailbox import ArchiveOutcome, archive_message, inbox_of
from st2.bus.publication import DIRECTORY_MODE, MESSAGE_MODE, ensure_box, staging_directory
from st2.bus.reservation import deliver_reserved, key_digest
from st2.bus.send import MAX_KEY_CHARS, fresh_filename
from st2.catalog.layout import CONTROL_DIR
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.fs.atomic import publish
from st2.fs.lock import record_lock
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.records import decoding

SCHEMA = "st2.stream-ring.v1"
RING_CAPACITY = 128
STREAMS = "streams"
MAX_STREAM_CHARS = 64


@dataclass(frozen=True)
class Receipt:
    event_id: str
    key: str | None
    filename: str
    digest: str

    def as_json(self) -> dict:
        return {"eventId": self.event_id, "key": self.key, "filename": self.filename,
                "payloadSha256": self.digest}


@dataclass(frozen=True)
class EmitResult:
    stream: str
    event_id: str
    filename: str
    deduplicated: bool
    superseded: str | None

    def json_row(self) -> dict:
        """``event emit --json``: status, stream, eventId, filename, deduplicated, superseded."""
        return {
            "status": "published",
            "stream": self.stream,
            "eventId": self.event_id,
            "filename": self.filename,
            "deduplicated": self.deduplicated,
            "superseded": self.superseded,
        }


def ring_path(catalog: Path, seat: Seat, stream: str) -> Path:
    return Path(catalog) / CONTROL_DIR / STREAMS / seat.host / seat.identity / f"{stream}.json"


def read_ring(data: bytes | None, stream: str) -> list[Receipt]:
    """The ring's receipts, oldest first. Raise :class:`BusError` for a foreign or malformed
    record: forgetting receipts silently would let a replay publish twice."""
    if data is None:
        return []
    try:
        record = decoding.load_json(data)
        if record.get("schema") != SCHEMA or record.get("stream") != stream:
            raise ValueError("foreign schema or stream")
        receipts = [
            Receipt(entry["eventId"], entry["key"], entry["filename"], entry["payloadSha256"])
            for entry in record["receipts"]
        ]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise BusError(f"stream ring for {stream!r} is unreadable ({error}); refusing to emit") from None
    if not all(is_message_filename(receipt.filename) for receipt in receipts):
        raise BusError(f"stream ring for {stream!r} names an invalid filename; refusing to emit")
    return receipts


def render_ring(stream: str, receipts: list[Receipt]) -> bytes:
    record = {"schema": SCHEMA, "stream": stream, "receipts": [r.as_json() for r in receipts]}
    return (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def _predecessor(receipts: list[Receipt], index: int) -> Receipt | None:
    current = receipts[index]
    for earlier in reversed(receipts[:index]):
        if current.key is None or earlier.key == current.key:
            return earlier
    return None


def emit(
    catalog: Path,
    seat: Seat,
    *,
    stream: str,
    event_id: str,
    body: str,
    key: str | None = None,
    supersede: bool = False,
    subject: str | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> EmitResult:
    """Publish one event to ``seat``. Raise :class:`BusError`, with nothing written, for an
    undeclared stream, a seat that is not running, a hostile field, or a retained event id whose
    content differs."""
    check_name("stream", stream, MAX_STREAM_CHARS)
    check_header_text("event id", event_id, MAX_KEY_CHARS)
    if key is not None:
        check_header_text("event key", key, MAX_KEY_CHARS)
    if subject is None:
        subject = f"{stream}: {event_id}"
    sender = STREAM_SENDER_PREFIX + stream
    data = render(sender, subject, None, (STREAM_TAG, sender), None, body)
    if stream not in seat.streams:
        raise BusError(f"agent {seat.bus_id} declares no stream {stream!r}")
    if not seat.running:
        raise BusError(
            f"agent {seat.bus_id} is {seat.desired_state}; stream ingress accepts events only "
            "while it is running"
        )
    digest = key_digest(key if key is not None else "\0", data.decode("utf-8"))
    catalog = Path(catalog)
    staging = staging_directory(catalog)
    ensure_box(inbox_of(seat.directory), catalog)
    ring = ring_path(catalog, seat, stream)
    ring.parent.mkdir(parents=True, exist_ok=True, mode=DIRECTORY_MODE)
    with record_lock(ring):
        try:
            existing = read_bounded(ring, RUNTIME_LIMIT, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        receipts = read_ring(existing, stream)
        index = next((i for i, r in enumerate(receipts) if r.event_id == event_id), None)
        if index is not None:
            if receipts[index].digest != digest:
                raise BusError(
                    f"event {event_id!r} on stream {stream!r} was already published with "
                    "different content"
                )
            created = False
        else:
            receipts.append(Receipt(event_id, key, fresh_filename(seat.directory, clock), digest))
            receipts = receipts[-RING_CAPACITY:]
            index = len(receipts) - 1
            # The ring is the reservation: it is durable before the message exists.
            publish(ring, render_ring(stream, receipts), staging, root=catalog, mode=MESSAGE_MODE)
            created = True
        receipt = receipts[index]
        delivered = deliver_reserved(seat.directory, receipt.filename, data, staging)
        superseded = None
        if supersede:
            predecessor = _predecessor(receipts, index)
            if predecessor is not None:
                try:
                    if archive_message(seat.directory, predecessor.filename) in (
                        ArchiveOutcome.ARCHIVED, ArchiveOutcome.ALREADY_ARCHIVED
                    ):
                        superseded = predecessor.filename
                except BusError:
                    superseded = None  # never delivered: nothing to collapse
    return EmitResult(stream, event_id, receipt.filename, not (created and delivered), superseded)
