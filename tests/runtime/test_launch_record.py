from __future__ import annotations

import pytest

from st2.runtime import launch_record
from st2.runtime.launch_record import LaunchRecord, MalformedRecord, parse
from st2.runtime.scope import RuntimeScope

RECORD = LaunchRecord(
    runtime_id="h.a", kind="exec", pid=42, start_time=1788000000.25,
    created_at="2026-08-29T10:40:00.250Z", generation_id="sha256:g", argv_digest="sha256:a",
    launched_at_ms=1788000000300, supervisor_pid=7, log="/c/logs/h.a.log",
)


@pytest.fixture
def scope(tmp_path) -> RuntimeScope:
    catalog = tmp_path / "c"
    catalog.mkdir()
    return RuntimeScope(catalog, "h", state_dir=tmp_path / "s")


def test_launch_record_wire_shape_is_pinned():
    assert RECORD.to_json() == (
        b'{"schema":"st2.launch-record.v1","runtimeId":"h.a","kind":"exec","pid":42,'
        b'"startTime":1788000000.25,"createdAt":"2026-08-29T10:40:00.250Z","generationId":"sha256:g",'
        b'"argvDigest":"sha256:a","launchedAtMs":1788000000300,"supervisorPid":7,"socket":null,'
        b'"serverPid":null,"log":"/c/logs/h.a.log"}\n'
    )
    assert parse(RECORD.to_json(), "h.a") == RECORD


@pytest.mark.parametrize("data", [
    b"", b"not json", b"[]", b'{"schema":"other"}',
    RECORD.to_json().replace(b'"pid":42', b'"pid":0'),
    RECORD.to_json().replace(b'"kind":"exec"', b'"kind":"vm"'),
    RECORD.to_json().replace(b'"startTime":1788000000.25,', b""),
    RECORD.to_json().replace(b'"kind":"exec"', b'"kind":"pty"'),   # PTY without socket
])
def test_malformed_records_are_refused(data):
    with pytest.raises(MalformedRecord):
        parse(data, "h.a")


def test_a_record_for_another_runtime_id_is_refused():
    with pytest.raises(MalformedRecord):
        parse(RECORD.to_json(), "h.b")


def test_write_read_remove_round_trip_and_missing_scope_reads_empty(scope):
    assert launch_record.recorded_ids(scope) == []
    assert not scope.directory.exists()          # reading never creates the scope
    launch_record.write(scope, RECORD)
    assert launch_record.read(scope, "h.a") == RECORD
    assert launch_record.recorded_ids(scope) == ["h.a"]
    launch_record.remove(scope, "h.a")
    assert launch_record.read(scope, "h.a") is None
