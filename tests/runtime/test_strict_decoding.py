"""Host-local JSON records (launch record, park marker, supervisor record, DING ownership) decode
through the strict decoder the replicated records use (st2.records.decoding): a duplicate field
or a non-finite number is malformed, never a definite value (bare json.loads takes the last
duplicate and accepts NaN)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.ding import ownership
from st2.process.identity import ProcessIdentity
from st2.runtime import launch_record
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope
from st2.supervisor import park, supervisor_record
from st2.supervisor.park import ParkMarker


def duplicated(data: bytes, field: str, first) -> bytes:
    """``data`` with ``field`` written twice: a bogus first value, then the real one."""
    text = data.decode().rstrip("\n")
    return ("{" + json.dumps(field) + ":" + json.dumps(first) + "," + text[1:]).encode()


def test_a_launch_record_with_a_duplicate_field_is_malformed() -> None:
    record = LaunchRecord(runtime_id="h.a", kind="exec", pid=42, start_time=1.5, created_at="x", generation_id="g",
                          argv_digest="d", launched_at_ms=1, supervisor_pid=7)
    assert launch_record.parse(record.to_json(), "h.a") == record  # the twin: a clean record reads
    with pytest.raises(launch_record.MalformedRecord):
        launch_record.parse(duplicated(record.to_json(), "pid", 1), "h.a")
    with pytest.raises(launch_record.MalformedRecord):
        launch_record.parse(record.to_json().replace(b'"startTime":1.5', b'"startTime":NaN'), "h.a")


def test_a_park_marker_with_a_duplicate_field_is_malformed() -> None:
    marker = ParkMarker(runtime_id="h.a", catalog="/c", host="h", supervisor=ProcessIdentity(7, 1.0),
                        parked_at_ms=1, reason="r", attempts=3)
    assert park.parse(marker.to_json(), "h.a").reason == "r"
    with pytest.raises(ValueError):
        park.parse(duplicated(marker.to_json(), "reason", "other"), "h.a")


def test_a_supervisor_record_with_a_duplicate_field_reads_absent(tmp_path: Path) -> None:
    scope = RuntimeScope(tmp_path / "catalog", "h", tmp_path / "state")
    supervisor_record.write(scope, ProcessIdentity(7, 1.0), 1)
    assert supervisor_record.read(scope) == ProcessIdentity(7, 1.0)
    target = supervisor_record.path(scope)
    target.write_bytes(duplicated(target.read_bytes(), "pid", 8))
    assert supervisor_record.read(scope) is None


def test_a_ding_ownership_record_with_a_duplicate_field_is_malformed() -> None:
    data = ownership.encode(ownership.Ownership(target="h.a"))
    assert ownership.decode(data, "h.a").target == "h.a"
    with pytest.raises(ownership.MalformedOwnership):
        ownership.decode(duplicated(data, "phase", "bogus"), "h.a")
