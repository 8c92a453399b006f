"""The channel consumer (st2/drivers/channel/frames.py): the wire decoded conservatively, each frame
applied whole to harness-context / harness-state, nothing malformed written."""

from __future__ import annotations

import json

import pytest
from support_channel import Session, make_seat, record

from st2.drivers.channel.frames import FRAME_LIMIT, DiagnosticLog, Malformed, StateFrame, decode
from st2.records import harness_context

READING = {"tokens": 11442, "contextWindow": 200000, "percent": 5.721, "model": "fake-claude", "costUsd": 0.0318}


def frame(**fields) -> bytes:
    return json.dumps({"type": "context", "event": "turn_end", "reading": READING, "compaction": None} | fields,
                      separators=(",", ":")).encode()


def test_a_context_frame_lands_every_reading_key_in_the_record(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    assert session.feed(frame() + b"\n") == [["harness-context"]]
    written = record(seat, "harness-context")
    assert (written["harness"], written["usedTokens"], written["windowTokens"], written["usedPercent"],
            written["model"], written["costUsd"], written["compactions"]) == (
        "pi", 11442, 200000, 5.721, "fake-claude", 0.0318, 0)
    assert session.diagnostics == []


def test_a_percent_above_the_window_is_carried_unclamped(catalog, clock) -> None:
    seat = make_seat(catalog)
    Session(seat, "pi", clock).feed(frame(reading=READING | {"tokens": 23425, "contextWindow": 4000,
                                                             "percent": 585.625}) + b"\n")
    assert record(seat, "harness-context")["usedPercent"] == 585.625


def test_a_compaction_edge_and_its_withheld_reading_land_in_one_write(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    session.feed(frame() + b"\n")
    clock.advance(1)
    withheld = READING | {"tokens": None, "percent": None}
    assert session.feed(frame(event="session_compact", reading=withheld,
                              compaction={"trigger": "unknown", "count": 3}) + b"\n") == [["harness-context"]]
    written = record(seat, "harness-context")
    assert (written["usedTokens"], written["usedPercent"], written["windowTokens"], written["compactions"],
            written["lastCompactionTrigger"], written["lastCompactionMs"]) == (
        None, None, 200000, 3, "unknown", clock.wall_ms())


def test_an_unreadable_durable_count_degrades_to_counting_edges_not_to_losing_them(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "omp", clock)
    session.feed(frame(compaction={"trigger": "unknown", "count": 2}) + b"\n")
    for expected in (3, 4):
        clock.advance(1)
        session.feed(frame(compaction={"trigger": "unknown", "count": None}) + b"\n")
        assert record(seat, "harness-context")["compactions"] == expected


def test_a_trigger_word_the_record_does_not_know_reads_unknown(catalog, clock) -> None:
    seat = make_seat(catalog)
    Session(seat, "pi", clock).feed(frame(compaction={"trigger": "because", "count": 1}) + b"\n")
    assert record(seat, "harness-context")["lastCompactionTrigger"] == "unknown"


def test_state_frames_follow_turns_and_a_human_block(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "omp", clock)

    def state(word: str, blocked: str = "none", ask: str = "none") -> bytes:
        return json.dumps({"type": "state", "event": "x", "state": word, "blockedOn": blocked, "ask": ask}).encode() + b"\n"

    seen = []
    for line in (state("idle"), state("active"), state("active", "human", "permission"), state("active"), state("idle")):
        assert session.feed(line) == [["harness-state"]]
        current = record(seat, "harness-state")
        seen.append((current["state"], current["blockedOn"], current["ask"]))
    assert seen == [("idle", "none", "none"), ("active", "none", "none"), ("active", "human", "permission"),
                    ("active", "none", "none"), ("idle", "none", "none")]


MALFORMED = {
    "not json": b"{type: context}",
    "not an object": b"[1, 2]",
    "unknown type": b'{"type":"reading","reading":{}}',
    "reading lacks a key": frame(reading={key: value for key, value in READING.items() if key != "costUsd"}),
    "flattened envelope": json.dumps({"type": "context", **READING, "compaction": None}).encode(),
    "float tokens": frame(reading=READING | {"tokens": 11442.5}),
    "boolean tokens": frame(reading=READING | {"tokens": True}),
    "negative tokens": frame(reading=READING | {"tokens": -1}),
    "zero window": frame(reading=READING | {"contextWindow": 0}),
    "string percent": frame(reading=READING | {"percent": "5.7"}),
    "negative cost": frame(reading=READING | {"costUsd": -0.1}),
    "non-printable model": frame(reading=READING | {"model": "fake\u0007claude"}),
    "edge without count": frame(compaction={"trigger": "manual"}),
    "negative count": frame(compaction={"trigger": "manual", "count": -2}),
    "no reading and no edge": frame(reading=None),
    "missing compaction key": json.dumps({"type": "context", "reading": READING}).encode(),
    "unknown state": b'{"type":"state","state":"busy","blockedOn":"none","ask":"none"}',
    "ask without a block": b'{"type":"state","state":"active","blockedOn":"none","ask":"permission"}',
    "invalid utf-8": b'{"type":"state","state":"\xff"}',
    "nested too deep": b"[" * 2000 + b"]" * 2000,
    "overlong": b'{"type":"state","pad":"' + b"x" * FRAME_LIMIT + b'"}',
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_context_frames_decode_conservatively_or_not_at_all(catalog, clock, case) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    session.feed(frame() + b"\n")
    before = (seat.directory / "harness-context").read_bytes(), (seat.directory / "harness-state").read_bytes()
    clock.advance(400)  # a valid reading would be due by the heartbeat: a malformed one never is
    assert session.feed(MALFORMED[case] + b"\n") in ([[]], [])  # applied nothing
    assert ((seat.directory / "harness-context").read_bytes(), (seat.directory / "harness-state").read_bytes()) == before
    assert len(session.diagnostics) == 1 and session.diagnostics[0].startswith("malformed frame dropped: ")


def test_the_consumer_joins_a_frame_split_across_reads_and_drops_an_overlong_one_whole(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    line = frame() + b"\n"
    assert session.feed(line[:10]) == []
    assert session.feed(line[10:]) == [["harness-context"]]
    overlong = b'{"type":"state","pad":"' + b"x" * (FRAME_LIMIT * 3) + b'"}\n'
    clock.advance(400)
    results = []
    for start in range(0, len(overlong), 1000):
        results += session.feed(overlong[start:start + 1000])
    assert results == [] and session.diagnostics == [f"malformed frame dropped: frame exceeds {FRAME_LIMIT} bytes"]
    clock.advance(1)
    state = b'{"type":"state","state":"active","blockedOn":"none","ask":"none"}\n'
    assert session.feed(state) == [["harness-state"]]  # the next frame after the discarded one applies


def test_a_partial_frame_at_the_end_of_the_channel_is_a_diagnostic(catalog, clock) -> None:
    session = Session(make_seat(catalog), "pi", clock)
    session.feed(frame()[:20])
    session.consumer.finish()
    assert session.diagnostics == ["malformed frame dropped: a partial frame at the end of the channel"]


def test_a_failing_writer_is_a_diagnostic_never_the_loops_end(catalog, clock) -> None:
    session = Session(make_seat(catalog), "pi", clock)

    class Broken:
        def publish(self, reading, edge):
            raise OSError(28, "No space left on device")

    session.consumer.context = Broken()
    assert session.feed(frame() + b"\n") == [[]]
    assert session.diagnostics == ["applying a ContextFrame failed: [Errno 28] No space left on device"]


def test_extra_keys_are_tolerated() -> None:
    decoded = decode(b'{"type":"state","event":"agent_end","state":"idle","blockedOn":"none","ask":"none","v":2}')
    assert decoded == StateFrame("agent_end", "idle", "none", "none")
    with pytest.raises(Malformed):
        decode(b'{"type":"state","state":"idle","blockedOn":"none"}')


def test_the_diagnostics_file_is_bounded_to_two_generations(tmp_path, clock) -> None:
    log = DiagnosticLog(tmp_path / "channel" / "h.w.log", clock, limit=200)
    for number in range(50):
        log(f"malformed frame dropped: case {number}")
    files = sorted(path.name for path in (tmp_path / "channel").iterdir())
    assert files == ["h.w.log", "h.w.log.1"]
    assert all(path.stat().st_size <= 200 for path in (tmp_path / "channel").iterdir())
    assert (tmp_path / "channel" / "h.w.log").read_text().splitlines()[-1].endswith("case 49")


def test_a_withheld_value_is_never_filled_from_the_previous_reading(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    session.feed(frame() + b"\n")
    clock.advance(1)
    session.feed(frame(reading={key: None for key in READING}, compaction={"trigger": "unknown", "count": 1}) + b"\n")
    written = record(seat, "harness-context")
    assert [written[key] for key in ("usedTokens", "windowTokens", "usedPercent", "model", "costUsd")] == [None] * 5
    assert harness_context.read_file(seat.directory / "harness-context", clock.wall_ms()).used_percent is None


def test_a_re_pulled_reading_refreshes_an_idle_seats_record_at_the_heartbeat_not_before(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = Session(seat, "omp", clock)
    session.feed(frame(event="agent_end") + b"\n")
    first = record(seat, "harness-context")
    clock.advance(60)
    assert session.feed(frame(event="repull") + b"\n") == [[]]  # same bucket, record young: nothing written
    clock.advance(241)
    assert session.feed(frame(event="repull") + b"\n") == [["harness-context"]]
    refreshed = record(seat, "harness-context")
    assert refreshed["observedAtMs"] == first["observedAtMs"] + 301_000 and refreshed["usedTokens"] == 11442
