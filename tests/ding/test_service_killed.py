"""The heartbeat's kill record (st2.ding.service_killed): what the killing stub publishes is what
every other stub reads, for that service only (PID and start ticks); anything else reads as None."""

from __future__ import annotations

from st2.ding import service_killed
from st2.ding.service_killed import Killed
from st2.runtime import layout


def test_the_record_round_trips_and_names_only_the_service_it_was_written_for(tmp_path) -> None:
    assert service_killed.read(tmp_path) is None
    killed = Killed(pid=123, start_ticks=456, by=789, bound_seconds=10.0)
    service_killed.write(tmp_path, killed)
    assert service_killed.path(tmp_path).read_bytes() == (
        b'{"schema":"st2.ding-service-killed.v1","pid":123,"startTicks":456,"by":789,"boundSeconds":10.0}\n')
    assert service_killed.read(tmp_path) == killed
    assert service_killed.names(killed, 123, 456)
    assert not service_killed.names(killed, 123, 457)        # the PID reused by a later process
    assert not service_killed.names(None, 123, 456)
    assert killed.says() == "the DING service (pid 123) did not answer its heartbeat within 10s and was SIGKILLed by pid 789"
    assert [entry.name for entry in tmp_path.iterdir()] == [layout.DING_SERVICE_KILLED]   # no temp file left


def test_an_unreadable_record_reads_as_none(tmp_path) -> None:
    for data in (b"[" * 1000 + b"]" * 1000, b'{"schema":"other"}', b'{"schema":"st2.ding-service-killed.v1"}',
                 b'{"schema":"st2.ding-service-killed.v1","pid":true,"startTicks":1,"by":2}', b"\xff"):
        service_killed.path(tmp_path).write_bytes(data)
        assert service_killed.read(tmp_path) is None, data


def test_the_first_stub_to_kill_a_service_stays_its_killer(tmp_path) -> None:
    first = Killed(pid=123, start_ticks=456, by=789, bound_seconds=10.0)
    second = Killed(pid=123, start_ticks=456, by=790, bound_seconds=10.0)   # its ping unanswered as the kill landed
    assert service_killed.write(tmp_path, first) == first
    assert service_killed.write(tmp_path, second) == first
    assert service_killed.read(tmp_path) == first
    later = Killed(pid=321, start_ticks=654, by=790, bound_seconds=10.0)    # a later service's kill replaces it
    assert service_killed.write(tmp_path, later) == later
    assert service_killed.read(tmp_path) == later
