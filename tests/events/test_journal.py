"""The journal's bounded segments, torn tails and follower, and the pinned event line (unit tier:
real files in a temp directory, no process)."""

from __future__ import annotations

from pathlib import Path

from st2.events import journal
from st2.events.event import FleetEvent, NotAnEvent, parse_line
from st2.fs.atomic import ensure_directory, publish

import pytest


def writer(directory: Path, segment_bytes: int = journal.SEGMENT_BYTES) -> journal.JournalWriter:
    staging = ensure_directory(directory.parent / "staging")
    return journal.JournalWriter(directory, lambda path, data: publish(path, data, staging), segment_bytes)


def blocked(seat: str, to: str, at: int = 1_788_000_000_000) -> FleetEvent:
    return FleetEvent("blocked", seat, "none" if to == "human" else "human", to, at,
                      {"state": "active", "ask": "permission", "since": at - 5})


def test_the_event_line_is_pinned_field_for_field():
    line = blocked("h.a", "human").numbered(7).line()
    assert line == ('{"schema":"st2.fleet-event.v1","seq":7,"kind":"blocked","seat":"h.a","from":"none",'
                    '"to":"human","observedAtMs":1788000000000,"evidence":{"state":"active","ask":"permission",'
                    '"since":1787999999995}}')
    assert parse_line(line) == blocked("h.a", "human").numbered(7)
    fleet_wide = FleetEvent("pause", None, "OK", "PAUSE", 1788000000000, {"verdict": "v"}, 8)
    assert fleet_wide.line() == ('{"schema":"st2.fleet-event.v1","seq":8,"kind":"pause","seat":null,"from":"OK",'
                                 '"to":"PAUSE","observedAtMs":1788000000000,"evidence":{"verdict":"v"}}')
    assert fleet_wide.human() == "2026-08-29T10:40:00.000Z #8 pause fleet OK -> PAUSE (verdict=v)"


@pytest.mark.parametrize("line", [
    b'{"schema":"st2.fleet-event.v2","seq":1,"kind":"blocked","seat":"h.a","from":null,"to":"human","observedAtMs":1,"evidence":{}}',
    b'{"schema":"st2.fleet-event.v1","seq":0,"kind":"blocked","seat":"h.a","from":null,"to":"human","observedAtMs":1,"evidence":{}}',
    b'{"schema":"st2.fleet-event.v1","seq":1,"kind":"bored","seat":"h.a","from":null,"to":"human","observedAtMs":1,"evidence":{}}',
    b'{"schema":"st2.fleet-event.v1","seq":1,"kind":"blocked","seat":"h.a","to":"human","observedAtMs":1,"evidence":{}}',
    b'{"schema":"st2.fleet-event.v1","seq":1,"seq":2,"kind":"blocked","seat":"h.a","from":null,"to":"human","observedAtMs":1,"evidence":{}}',
    b'{"schema":"st2.fleet-event.v1","seq":true,"kind":"blocked","seat":"h.a","from":null,"to":"human","observedAtMs":1,"evidence":{}}',
    b"\xff\xfe",
])
def test_a_line_that_is_not_a_well_formed_event_is_refused(line):
    with pytest.raises(NotAnEvent):
        parse_line(line)


def test_segments_rotate_by_size_and_the_journal_holds_at_most_two(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory, segment_bytes=1000)
    journal_writer.resume()
    for index in range(40):
        journal_writer.append([blocked(f"h.s{index}", "human")])
    names = sorted(path.name for path in directory.iterdir())
    assert names == ["journal", "journal.1"]
    assert all((directory / name).stat().st_size <= 1000 for name in names)
    kept = journal.read_all(directory)
    assert [item.seq for item in kept] == list(range(kept[0].seq, 41)) and kept[0].seq > 1
    # A restarted writer continues after the last line, whatever rotation dropped.
    again = writer(directory, segment_bytes=1000)
    assert again.resume().seq == 40
    assert again.append([blocked("h.x", "none")])[0].seq == 41


def test_a_torn_tail_is_not_an_event_and_the_writer_cuts_it(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory)
    journal_writer.resume()
    journal_writer.append([blocked("h.a", "human")])
    whole = (directory / "journal").read_bytes()
    with open(directory / "journal", "ab") as handle:
        handle.write(b'{"schema":"st2.fleet-event.v1","seq":2,"kind":"blo')
    assert [item.seq for item in journal.read_all(directory)] == [1]
    again = writer(directory)
    assert again.resume().seq == 1
    assert (directory / "journal").read_bytes() == whole
    again.append([blocked("h.a", "none")])
    assert [item.seq for item in journal.read_all(directory)] == [1, 2]


def test_a_follower_crosses_a_rotation_without_losing_or_repeating_a_line(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory, segment_bytes=600)
    journal_writer.resume()
    follower = journal.Follower(directory)
    follower.start_at_end()
    seen = []
    for index in range(30):
        journal_writer.append([blocked(f"h.s{index}", "human")])
        if index % 2 == 0:  # the writer rotates between some polls (three lines per segment)
            seen += follower.poll()
    seen += follower.poll()
    assert [item.seq for item in seen] == list(range(1, 31))
    assert follower.poll() == [] and follower.lost == 0


def test_a_follower_left_more_than_a_segment_behind_counts_what_rotation_dropped(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory, segment_bytes=600)
    journal_writer.resume()
    follower = journal.Follower(directory)
    follower.start_at_end()
    for index in range(12):
        journal_writer.append([blocked(f"h.s{index}", "human")])
    seen = follower.poll()
    assert [item.seq for item in seen] == list(range(13 - len(seen), 13))
    assert follower.lost == 12 - len(seen) > 0


def test_a_follower_never_reads_a_line_still_being_written(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory)
    journal_writer.resume()
    follower = journal.Follower(directory)
    follower.start_at_end()
    line = blocked("h.a", "human").numbered(1).line().encode()
    with open(directory / "journal", "ab") as handle:
        handle.write(line[:30])
        handle.flush()
        assert follower.poll() == []
        handle.write(line[30:] + b"\n")
    assert [item.seq for item in follower.poll()] == [1]


def test_the_resumed_projection_replays_every_line_past_the_saved_state(tmp_path):
    directory = tmp_path / "events"
    journal_writer = writer(directory)
    journal_writer.resume()
    journal_writer.save_state({"seat:h.a": {"blocked|h.a|": "none"}})
    journal_writer.append([blocked("h.a", "human"),
                           FleetEvent("parked", "h.a", None, "crash-loop", 5,
                                      {"task": "h.a.job", "reason": "exited 3", "parkedAtMs": 4, "attempts": 2})])
    resumed = writer(directory).resume()
    assert (resumed.seq, resumed.replayed) == (2, 2)
    assert resumed.groups == {"seat:h.a": {"blocked|h.a|": "human"}, "#parks": {"parked|h.a|h.a.job": "crash-loop"}}


def test_an_append_is_durable_before_the_state_that_covers_it_is_published(tmp_path: Path, monkeypatch):
    """Every append's bytes are fsynced before it returns (and so before the state published
    after it): a power loss can never leave a state naming a seq whose line is gone."""
    import os

    directory = tmp_path / "events"
    directory.mkdir()
    order = []
    real_fsync = os.fsync

    def fsync(descriptor):
        target = os.readlink(f"/proc/self/fd/{descriptor}")
        if target == str(directory / journal.CURRENT):
            order.append(("fsync", os.fstat(descriptor).st_size))
        return real_fsync(descriptor)

    monkeypatch.setattr(journal.os, "fsync", fsync)
    staging = ensure_directory(tmp_path / "staging")
    written = journal.JournalWriter(directory, lambda path, data: (order.append(("publish", path.name)),
                                                                   publish(path, data, staging)))
    written.resume()
    written.append([blocked("h.a", "human")])
    size = (directory / journal.CURRENT).stat().st_size
    assert order == [("fsync", size)]
    written.save_state({})
    written.append([blocked("h.a", "none")])
    assert order == [("fsync", size), ("publish", journal.STATE), ("fsync", (directory / journal.CURRENT).stat().st_size)]
