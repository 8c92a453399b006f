"""Durable refresh demands: sequence numbers, the admission bound of 256 (the 257th refused
naming it), receipts published before the demand is removed, pending receipts."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.resources import demand
from st2.runtime import layout


def queue_of(scope: Path) -> Path:
    return layout.resource_demand(scope, "h.w", "doc")


def test_demands_are_numbered_and_the_257th_is_refused_naming_the_bound(tmp_path: Path) -> None:
    for expected in range(1, 257):
        assert demand.admit(tmp_path, "h.w", "doc", 1000) == expected
    with pytest.raises(demand.AdmissionRefused, match="the admission bound is 256"):
        demand.admit(tmp_path, "h.w", "doc", 1000)
    assert len(demand.pending(queue_of(tmp_path))) == 256
    demand.close(queue_of(tmp_path), [1], demand.Receipt("h.w", "doc", 0, "closed", "Published", 5, 1, 2, None, 9))
    assert demand.admit(tmp_path, "h.w", "doc", 1000) == 257  # one closed: room for exactly one more


def test_a_receipt_is_pending_until_closed_and_then_names_its_result(tmp_path: Path) -> None:
    seq = demand.admit(tmp_path, "h.w", "doc", 1000)
    queue = queue_of(tmp_path)
    assert demand.read_receipt(queue, "h.w", "doc", seq).state == "pending"
    demand.close(queue, [seq], demand.Receipt("h.w", "doc", 0, "closed", "Unchanged", 42, 3, 7, None, 2000))
    receipt = demand.read_receipt(queue, "h.w", "doc", seq)
    assert demand.encode_receipt(receipt) == (
        b'{"schema":"st2.resource-receipt.v1","agent":"h.w","binding":"doc","demand":1,"state":"closed",'
        b'"result":"Unchanged","watermark":42,"generation":3,"revision":7,"reason":null,"closedAtMs":2000}\n')
    assert demand.pending(queue) == []
    pending = demand.read_receipt(queue, "h.w", "doc", 99)
    assert demand.encode_receipt(pending) == (
        b'{"schema":"st2.resource-receipt.v1","agent":"h.w","binding":"doc","demand":99,"state":"pending",'
        b'"result":null,"watermark":null,"generation":null,"revision":null,"reason":null,"closedAtMs":null}\n')


def test_a_demand_whose_receipt_landed_before_a_crash_is_not_pending(tmp_path: Path) -> None:
    seq = demand.admit(tmp_path, "h.w", "doc", 1000)
    queue = queue_of(tmp_path)
    receipt = demand.Receipt("h.w", "doc", seq, "closed", "Published", 1, 1, 1, None, 5)
    (layout.resource_receipts(queue) / f"{seq:012d}.json").write_bytes(demand.encode_receipt(receipt))
    assert (queue / f"{seq:012d}.json").exists()  # the crash came before the unlink
    assert demand.pending(queue) == []


def test_sequence_numbers_survive_a_lost_counter(tmp_path: Path) -> None:
    demand.admit(tmp_path, "h.w", "doc", 1)
    demand.admit(tmp_path, "h.w", "doc", 1)
    layout.resource_demand_counter(queue_of(tmp_path)).write_bytes(b"garbage")
    assert demand.admit(tmp_path, "h.w", "doc", 1) == 3
