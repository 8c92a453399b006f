"""Stream ingress: declared streams of running seats, one filename per id within a 128-ring."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from st2.bus import BusError, sent
from st2.bus.addressing import resolve_seat
from st2.bus.mailbox import archive_message, archive_of, inbox_of, list_inbox, message_names
from st2.bus.stream import RING_CAPACITY, emit, ring_path


def bob(catalog: Path):
    return resolve_seat(catalog, "robert")


def fire(catalog: Path, clock, event_id: str, body: str = "ok", **options):
    clock.advance(0.001)
    return emit(catalog, bob(catalog), stream="ci", event_id=event_id, body=body, clock=clock, **options)


def test_stable_event_identity_publishes_exactly_one_canonical_message(bus_catalog: Path, clock) -> None:
    first = fire(bus_catalog, clock, "run-1", subject="CI green")
    again = fire(bus_catalog, clock, "run-1", subject="CI green")
    assert first.json_row() == {"status": "published", "stream": "ci", "eventId": "run-1",
                                "filename": first.filename, "deduplicated": False, "superseded": None}
    assert (again.filename, again.deduplicated) == (first.filename, True)
    assert (inbox_of(bob(bus_catalog).directory) / first.filename).read_text() == (
        "---\nfrom: stream:ci\nsubject: CI green\ntags: st2-stream, stream:ci\n---\nok\n"
    )
    assert sent.list_sent(bus_catalog, "stream:ci") == []  # events write no ledger


def test_conflicting_reuse_and_undeclared_or_suspended_ingress_fail_closed(bus_catalog: Path, clock,
                                                                             snapshot) -> None:
    fire(bus_catalog, clock, "run-1")
    before = snapshot(bus_catalog)
    with pytest.raises(BusError, match="already published with different content"):
        fire(bus_catalog, clock, "run-1", body="other")
    with pytest.raises(BusError, match="declares no stream 'deploy'"):
        emit(bus_catalog, bob(bus_catalog), stream="deploy", event_id="x", body="b", clock=clock)
    paused = resolve_seat(bus_catalog, "paused")
    with pytest.raises(BusError, match="suspended; stream ingress accepts events only while it is running"):
        emit(bus_catalog, paused, stream="ci", event_id="x", body="b", clock=clock)
    with pytest.raises(BusError, match="declares no stream"):
        emit(bus_catalog, resolve_seat(bus_catalog, "alice"), stream="ci", event_id="x", body="b", clock=clock)
    assert snapshot(bus_catalog) == before


def test_subject_frontmatter_injection_is_refused_before_any_write(bus_catalog: Path, clock, snapshot) -> None:
    before = snapshot(bus_catalog)
    for options in ({"subject": "x\nfrom: evil"}, {"subject": "a --- b"}, {"key": "k\x1b[2J"}):
        with pytest.raises(BusError, match="refused"):
            fire(bus_catalog, clock, "run-1", **options)
    with pytest.raises(BusError, match="refused"):
        fire(bus_catalog, clock, "id\nwith newline")
    with pytest.raises(BusError, match="refused"):
        emit(bus_catalog, bob(bus_catalog), stream="../ci", event_id="x", body="b", clock=clock)
    assert snapshot(bus_catalog) == before


def test_stream_state_is_bounded_and_forgets_only_beyond_its_honest_horizon(bus_catalog: Path, clock) -> None:
    seat = bob(bus_catalog)
    first = {f"e{n}": fire(bus_catalog, clock, f"e{n}").filename for n in range(200)}
    assert len(message_names(inbox_of(seat.directory))) == 200
    ring = json.loads(ring_path(bus_catalog, seat, "ci").read_bytes())
    assert len(ring["receipts"]) == RING_CAPACITY == 128
    assert [r["eventId"] for r in ring["receipts"]] == [f"e{n}" for n in range(72, 200)]
    # The last 128 ids are retained: a replay publishes nothing new.
    for n in range(72, 200):
        replay = fire(bus_catalog, clock, f"e{n}")
        assert (replay.filename, replay.deduplicated) == (first[f"e{n}"], True)
    assert len(message_names(inbox_of(seat.directory))) == 200
    # The first 72 were evicted: honestly new, each gets a fresh file.
    for n in range(72):
        replay = fire(bus_catalog, clock, f"e{n}")
        assert not replay.deduplicated and replay.filename != first[f"e{n}"]
    assert len(message_names(inbox_of(seat.directory))) == 272
    assert len(json.loads(ring_path(bus_catalog, seat, "ci").read_bytes())["receipts"]) == 128


def test_supersede_collapses_only_the_matching_key_and_preserves_archive_receipts(bus_catalog: Path, clock) -> None:
    seat = bob(bus_catalog)
    a1 = fire(bus_catalog, clock, "a1", key="job-a").filename
    b1 = fire(bus_catalog, clock, "b1", key="job-b").filename
    a2 = fire(bus_catalog, clock, "a2", key="job-a", supersede=True)
    assert a2.superseded == a1
    assert [m.filename for m in list_inbox(seat.directory)] == [b1, a2.filename]
    assert message_names(archive_of(seat.directory)) == [a1]
    # Superseding a predecessor the recipient already read keeps its receipt as it was.
    archive_message(seat.directory, b1)
    receipt = (archive_of(seat.directory) / b1).read_bytes()
    b2 = fire(bus_catalog, clock, "b2", key="job-b", supersede=True)
    assert b2.superseded == b1
    assert (archive_of(seat.directory) / b1).read_bytes() == receipt
    assert [m.filename for m in list_inbox(seat.directory)] == [a2.filename, b2.filename]


def test_keyless_supersede_replaces_the_stream_wide_head(bus_catalog: Path, clock) -> None:
    seat = bob(bus_catalog)
    one = fire(bus_catalog, clock, "one", key="k").filename
    two = fire(bus_catalog, clock, "two").filename
    three = fire(bus_catalog, clock, "three", supersede=True)
    assert three.superseded == two
    assert [m.filename for m in list_inbox(seat.directory)] == [one, three.filename]
    no_predecessor = fire(bus_catalog, clock, "four", key="fresh", supersede=True)
    assert no_predecessor.superseded is None


def test_crash_replay_honors_an_archive_receipt_and_never_restores_the_inbox_copy(bus_catalog: Path, clock) -> None:
    seat = bob(bus_catalog)
    first = fire(bus_catalog, clock, "run-1")
    archive_message(seat.directory, first.filename)
    replay = fire(bus_catalog, clock, "run-1")
    assert replay.filename == first.filename and replay.deduplicated
    assert message_names(inbox_of(seat.directory)) == []
    # Crash seam: the ring reserved the filename but the message never landed.
    os.unlink(archive_of(seat.directory) / first.filename)
    finished = fire(bus_catalog, clock, "run-1")
    assert finished.filename == first.filename
    assert message_names(inbox_of(seat.directory)) == [first.filename]


def test_an_unreadable_ring_fails_closed(bus_catalog: Path, clock) -> None:
    fire(bus_catalog, clock, "run-1")
    ring_path(bus_catalog, bob(bus_catalog), "ci").write_text('{"schema":"other"}')
    with pytest.raises(BusError, match="unreadable"):
        fire(bus_catalog, clock, "run-1")
