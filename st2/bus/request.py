"""Idempotent service requests: a declared principal asks an agent, the agent replies.

``send``: the principal publishes one exact JSON request per caller-supplied idempotency key to
an agent's canonical inbox. The reservation lives at the principal's
``resources/request-state/outgoing/<sha256-hex(key)>.json``; replays reuse its filename and a
different request under the key fails. ``reply``: the addressed agent publishes at most one typed
reply per request into the principal's own inbox (reservation under the agent's
``resources/request-state/replies/``). ``status`` is the tagged union ``pending | replied``.
The JSON shapes keep the original's field names and order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from st2.bus import BusError
from st2.bus.addressing import Seat, resolve_seat
from st2.bus.envelope import check_header_text, render
from st2.bus.mailbox import archive_of, inbox_of, list_box, read_message
from st2.bus.principals import Principal, resolve_principal
from st2.bus.publication import ensure_box, staging_directory
from st2.bus.reservation import check_existing, deliver_reserved, payload_digest, read_reservation, reserve
from st2.bus.send import MAX_KEY_CHARS, fresh_filename
from st2.catalog.layout import RESOURCES
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.base.digest import sha256
from st2.records import decoding

VERSION = 1
REQUEST_TAG = "st2-request"
REPLY_TAG = "st2-request-reply"
REQUEST_STATE = "request-state"


def _canonical(value) -> object:
    """The value with every object's keys sorted (the original serializes JSON maps sorted)."""
    return json.loads(json.dumps(value, sort_keys=True))


def _dump(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parse_tags(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``k=v`` words into a sorted map. Raise :class:`BusError` for a malformed or repeated key."""
    tags: dict[str, str] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key:
            raise BusError(f"tag {pair!r} is not key=value")
        check_header_text("tag key", key, 64)
        check_header_text("tag value", value, 1000, allow_empty=True)
        if key in tags:
            raise BusError(f"tag {key!r} given twice")
        tags[key] = value
    return dict(sorted(tags.items()))


def parse_body(text: str) -> object:
    try:
        return decoding.load_json(text)
    except ValueError as error:
        raise BusError(f"request body is not JSON: {error}") from None


@dataclass(frozen=True)
class PublishReceipt:
    idempotency_key: str
    filename: str
    deduplicated: bool

    def json_row(self) -> dict:
        return {
            "status": "published",
            "idempotencyKey": self.idempotency_key,
            "filename": self.filename,
            "deduplicated": self.deduplicated,
        }


def _record_path(directory: Path, key_material: str) -> Path:
    return directory / f"{sha256(key_material.encode('utf-8')).hexdigest()}.json"


def _publish_once(catalog: Path, record: Path, recipient_directory: Path, fields: dict,
                  data: bytes, receipt_key: str, kind: str, clock: Clock) -> PublishReceipt:
    fields = {**fields, "payloadSha256": payload_digest(data)}
    check_existing(record, fields, kind)
    staging = staging_directory(catalog)
    ensure_box(record.parent, catalog)
    ensure_box(inbox_of(recipient_directory), catalog)
    filename, created = reserve(record, fields, fresh_filename(recipient_directory, clock), staging, kind)
    delivered = deliver_reserved(recipient_directory, filename, data, staging)
    return PublishReceipt(receipt_key, filename, deduplicated=not (created and delivered))


def send(catalog: Path, this_host: str, *, principal_name: str, recipient: str,
         idempotency_key: str, tags: dict[str, str], body: object,
         clock: Clock = SYSTEM_CLOCK) -> PublishReceipt:
    """Publish the request once. Raise :class:`BusError` for an undeclared principal, an
    unknown agent, an empty key, or a key reused with a different request."""
    check_header_text("idempotency key", idempotency_key, MAX_KEY_CHARS)
    principal = resolve_principal(catalog, principal_name, this_host)
    agent = resolve_seat(catalog, recipient)
    envelope = _dump({
        "version": VERSION,
        "idempotencyKey": idempotency_key,
        "from": principal.bus_id,
        "to": agent.bus_id,
        "replyTo": principal.bus_id,
        "tags": dict(sorted(tags.items())),
        "body": _canonical(body),
    })
    data = render(principal.bus_id, f"request {idempotency_key}", None, (REQUEST_TAG,), None, envelope)
    record = _record_path(principal.directory / RESOURCES / REQUEST_STATE / "outgoing", idempotency_key)
    fields = {"idempotencyKey": idempotency_key, "from": principal.bus_id, "to": agent.bus_id}
    return _publish_once(catalog, record, agent.directory, fields, data, idempotency_key, "request", clock)


def _read_request(catalog: Path, this_host: str, agent: Seat, filename: str) -> tuple[dict, Principal]:
    message = read_message(inbox_of(agent.directory), filename) or read_message(
        archive_of(agent.directory), filename
    )
    if message is None:
        raise BusError(f"no message {filename} in {agent.bus_id}'s inbox or archive")
    try:
        request = decoding.load_json(message.body)
    except ValueError:
        raise BusError(f"{filename} is not a typed st2 request") from None
    # Exactly these members, in any order (unknown members are refused, as the original does).
    expected = {"version", "idempotencyKey", "from", "to", "replyTo", "tags", "body"}
    if not isinstance(request, dict) or set(request) != expected:
        raise BusError(f"{filename} is not a typed st2 request")
    if request["version"] != VERSION or request["to"] != agent.bus_id:
        raise BusError(f"request {filename} is not addressed to agent {agent.bus_id}")
    if request["from"] != request["replyTo"] or message.sender != request["from"]:
        raise BusError(f"request {filename}: its sender and reply target disagree")
    if REQUEST_TAG not in message.tags or message.in_reply_to is not None:
        raise BusError(f"{filename} does not carry the st2-request transport tag")
    principal = resolve_principal(catalog, request["replyTo"], this_host)
    return request, principal


def read(catalog: Path, this_host: str, *, agent_name: str, filename: str) -> dict:
    """``request read --json``: status, idempotencyKey, requestFilename, from, tags, body."""
    agent = resolve_seat(catalog, agent_name, for_delivery=False)
    request, _principal = _read_request(catalog, this_host, agent, filename)
    return {
        "status": "request",
        "idempotencyKey": request["idempotencyKey"],
        "requestFilename": filename,
        "from": request["from"],
        "tags": request["tags"],
        "body": request["body"],
    }


def reply(catalog: Path, this_host: str, *, agent_name: str, filename: str,
          tags: dict[str, str], body: object, clock: Clock = SYSTEM_CLOCK) -> PublishReceipt:
    """Publish at most one typed reply to the requesting principal's inbox."""
    agent = resolve_seat(catalog, agent_name, for_delivery=False)
    request, principal = _read_request(catalog, this_host, agent, filename)
    key = request["idempotencyKey"]
    envelope = _dump({
        "version": VERSION,
        "idempotencyKey": key,
        "requestFilename": filename,
        "from": agent.bus_id,
        "tags": dict(sorted(tags.items())),
        "body": _canonical(body),
    })
    data = render(agent.bus_id, f"re: request {key}", filename, (REPLY_TAG,), None, envelope)
    record = _record_path(
        agent.directory / RESOURCES / REQUEST_STATE / "replies", f"{principal.bus_id}\0{key}"
    )
    fields = {"idempotencyKey": key, "from": agent.bus_id, "to": principal.bus_id}
    return _publish_once(catalog, record, principal.directory, fields, data, key, "reply", clock)


def status(catalog: Path, this_host: str, *, principal_name: str, idempotency_key: str) -> dict:
    """``request status --json``: ``{"status":"pending",…}`` or ``{"status":"replied",…}``."""
    principal = resolve_principal(catalog, principal_name, this_host)
    record = read_reservation(
        _record_path(principal.directory / RESOURCES / REQUEST_STATE / "outgoing", idempotency_key)
    )
    if record is None:
        raise BusError(f"no published request for idempotency key {idempotency_key!r}")
    request_filename = record["filename"]
    replies = []
    for box in (inbox_of(principal.directory), archive_of(principal.directory)):
        for message in list_box(box):
            if message.in_reply_to != request_filename or REPLY_TAG not in message.tags:
                continue
            try:
                envelope = decoding.load_json(message.body)
            except ValueError:
                continue
            if (
                isinstance(envelope, dict)
                and envelope.get("version") == VERSION
                and envelope.get("idempotencyKey") == idempotency_key
                and envelope.get("requestFilename") == request_filename
                and envelope.get("from") == record["to"]
                and message.sender == envelope.get("from")
                and envelope not in replies
            ):
                replies.append(envelope)
    if not replies:
        return {"status": "pending", "idempotencyKey": idempotency_key, "requestFilename": request_filename}
    if len(replies) > 1:
        raise BusError(f"conflicting replies for idempotency key {idempotency_key!r}")
    return {
        "status": "replied",
        "idempotencyKey": idempotency_key,
        "requestFilename": request_filename,
        "from": replies[0]["from"],
        "tags": replies[0]["tags"],
        "body": replies[0]["body"],
    }
