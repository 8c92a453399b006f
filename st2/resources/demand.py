"""Durable refresh demands and their receipts (docs/resources.md §Demand and receipts).

One queue per binding in the host-local runtime scope
(:func:`st2.runtime.layout.resource_demand`). :func:`admit` takes the queue's lock, refuses past
:data:`ADMISSION_BOUND` queued demands, allocates the next sequence number and publishes
``<seq>.json`` atomically; the demand then survives a supervisor restart. The host closes a
demand by publishing ``receipts/<seq>.json`` (which result closed it, under which watermark,
generation and revision) and only then removing ``<seq>.json``: a crash between the two leaves a
demand with a receipt, which :func:`pending` does not count. A client that stops waiting cancels
nothing. Every admission republishes the scope's one bell file (:func:`bell`), so the host learns
of new demands by one ``stat``, not by listing every queue.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple
from pathlib import Path

from st2.fs.atomic import ensure_directory, publish
from st2.fs.lock import record_lock
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.records import decoding
from st2.runtime import layout

DEMAND_SCHEMA = "st2.resource-demand.v1"
RECEIPT_SCHEMA = "st2.resource-receipt.v1"
ADMISSION_BOUND = 256
RECEIPTS_KEPT = 1024

Receipt = namedtuple("Receipt", ("agent", "binding", "demand", "state", "result", "watermark", "generation",
                                 "revision", "reason", "closed_at_ms"))
"""``state`` is ``pending`` or ``closed``; a closed receipt names the ``result`` (Published,
Unchanged or Failed) that closed the observation covering the demand."""


class AdmissionRefused(Exception):
    """The demand was not queued; the text is the one line the user reads."""


def _name(seq: int) -> str:
    return f"{seq:012d}.json"


def _staging(queue: Path) -> Path:
    return ensure_directory(layout.staging(queue.parent.parent.parent), mode=0o700)


def admit(scope_directory: Path, agent: str, binding: str, now_ms: int) -> int:
    """Queue one demand and return its sequence number; raise :class:`AdmissionRefused` when
    :data:`ADMISSION_BOUND` demands already wait."""
    queue = ensure_directory(layout.resource_demand(scope_directory, agent, binding), mode=0o700)
    ensure_directory(layout.resource_receipts(queue), mode=0o700)
    counter = layout.resource_demand_counter(queue)
    with record_lock(counter):
        waiting = pending(queue)
        if len(waiting) >= ADMISSION_BOUND:
            raise AdmissionRefused(f"{agent} resource {binding!r} already has {len(waiting)} queued refresh demands; "
                                   f"the admission bound is {ADMISSION_BOUND}, so this one is refused")
        try:
            seq = int(read_bounded(counter, RUNTIME_LIMIT, follow_symlinks=False).decode().strip() or "0") + 1
        except FileNotFoundError:
            seq = 1
        except (OSError, ValueError):
            seq = max([*waiting, _last_receipt(queue), 0]) + 1
        staging = _staging(queue)
        body = {"schema": DEMAND_SCHEMA, "agent": agent, "binding": binding, "demand": seq, "admittedAtMs": now_ms}
        publish(queue / _name(seq), json.dumps(body).encode() + b"\n", staging, mode=0o600)
        publish(counter, f"{seq}\n".encode(), staging, mode=0o600)
    publish(layout.resource_demand_bell(scope_directory), f"{agent} {binding} {seq}\n".encode(), staging, mode=0o600)
    return seq


def bell(scope_directory) -> tuple | None:
    """What changes whenever a demand is admitted anywhere in the scope (the bell is republished,
    a new inode each time): the host stats this one file instead of listing every queue."""
    try:
        status = os.stat(layout.resource_demand_bell(scope_directory))
    except OSError:
        return None
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def pending(queue: Path) -> list[int]:
    """The sequence numbers of the queue's demands that have no receipt yet, ascending."""
    try:
        names = os.listdir(queue)
    except FileNotFoundError:
        return []
    receipts = layout.resource_receipts(queue)
    found = []
    for name in names:
        stem, dot, suffix = name.partition(".")
        if dot and suffix == "json" and stem.isdigit() and len(stem) == 12 and not (receipts / name).exists():
            found.append(int(stem))
    return sorted(found)


def _last_receipt(queue: Path) -> int:
    try:
        names = os.listdir(layout.resource_receipts(queue))
    except FileNotFoundError:
        return 0
    return max((int(name[:12]) for name in names if name[:12].isdigit()), default=0)


def close(queue: Path, demands: list[int], receipt: Receipt) -> None:
    """Publish a receipt for each demand, then remove the demand (receipt first: a crash between
    leaves a closed demand, never a lost one)."""
    staging = _staging(queue)
    receipts = ensure_directory(layout.resource_receipts(queue), mode=0o700)
    for seq in demands:
        body = encode_receipt(receipt._replace(demand=seq))
        publish(receipts / _name(seq), body, staging, mode=0o600)
        try:
            os.unlink(queue / _name(seq))
        except FileNotFoundError:
            pass
    _prune(receipts)


def _prune(receipts: Path) -> None:
    names = sorted(name for name in os.listdir(receipts) if name.endswith(".json"))
    for name in names[:-RECEIPTS_KEPT]:
        try:
            os.unlink(receipts / name)
        except FileNotFoundError:
            pass


def encode_receipt(receipt: Receipt) -> bytes:
    return (json.dumps(receipt_wire(receipt), separators=(",", ":")) + "\n").encode()


def receipt_wire(receipt: Receipt) -> dict:
    """The receipt's JSON object, fields in the pinned order."""
    return {"schema": RECEIPT_SCHEMA, "agent": receipt.agent, "binding": receipt.binding, "demand": receipt.demand,
            "state": receipt.state, "result": receipt.result, "watermark": receipt.watermark,
            "generation": receipt.generation, "revision": receipt.revision, "reason": receipt.reason,
            "closedAtMs": receipt.closed_at_ms}


def read_receipt(queue: Path, agent: str, binding: str, seq: int) -> Receipt:
    """The demand's receipt: closed when the host published one, else pending (a malformed
    receipt reads pending: the demand itself is still queued or was closed by a later one)."""
    try:
        record = decoding.load_object(read_bounded(layout.resource_receipts(queue) / _name(seq), RUNTIME_LIMIT,
                                                   follow_symlinks=False))
        if record.get("schema") != RECEIPT_SCHEMA or record.get("demand") != seq or record.get("agent") != agent \
                or record.get("binding") != binding or record.get("state") != "closed":
            raise decoding.Malformed("not this demand's receipt")
        return Receipt(agent, binding, seq, "closed", decoding.string(record, "result"),
                       decoding.unsigned(record, "watermark"), decoding.unsigned(record, "generation"),
                       decoding.unsigned(record, "revision"), decoding.optional_string(record, "reason"),
                       decoding.stamp(record, "closedAtMs"))
    except (OSError, decoding.Malformed):
        return Receipt(agent, binding, seq, "pending", None, None, None, None, None, None)
