"""Observed harness state reader: every derivation arm fires with its own reason and has a
non-firing twin, on a FakeClock; the roster object keeps the original's field order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import harness_state
from support import compact

MINUTE = 60_000


def record(now: int, **changes) -> dict:
    value = {
        "schema": "st2.harness-state.v1", "agent": "host.worker", "harness": "claude", "state": "active",
        "blockedOn": "none", "inputBuffer": "unknown", "ask": "none", "ptySession": "host.worker",
        "incarnation": "token-1", "seq": 1, "sinceMs": now - 5_000, "writtenAtMs": now, "transitions": 4,
    }
    value.update(changes)
    return {key: item for key, item in value.items() if item is not DROP}


DROP = object()


def encode(value: dict) -> bytes:
    return json.dumps(value).encode()


def read(value: dict, now: int, liveness=None):
    return harness_state.read(encode(value), now, liveness)


def test_a_missing_record_is_no_observation_not_unknown(clock: FakeClock) -> None:
    assert harness_state.read(None, clock.wall_ms()) is None
    assert harness_state.to_wire(None) is None
    assert read(record(clock.wall_ms()), clock.wall_ms()).state == "active"


def test_a_fresh_record_projects_its_words_in_the_original_order(clock: FakeClock) -> None:
    now = clock.wall_ms()
    wire = harness_state.to_wire(read(record(now, blockedOn="human", ask="permission", reason="PermissionRequest"), now))
    assert compact(wire) == (
        '{"state":"active","blockedOn":"human","inputBuffer":"unknown","ask":"permission","harness":"claude",'
        f'"since":{now - 5000},"reason":"PermissionRequest","exit":null}}'
    )


@pytest.mark.parametrize("raw", [b"", b"{", b"[]", b"null", b'{"schema":"st2.harness-state.v1"}', b"\xff",
                                 b'{"a":1,"a":2}'])
def test_undecodable_bytes_read_unknown_malformed(clock: FakeClock, raw: bytes) -> None:
    observed = harness_state.read(raw, clock.wall_ms())
    assert compact(harness_state.to_wire(observed)) == (
        '{"state":"unknown","blockedOn":"unknown","inputBuffer":"unknown","ask":"unknown","harness":null,'
        '"since":null,"reason":"malformed-record","exit":null}'
    )


@pytest.mark.parametrize(
    "change",
    [{"writtenAtMs": -1}, {"writtenAtMs": 1.5}, {"writtenAtMs": True}, {"sinceMs": DROP}, {"transitions": DROP},
     {"state": 3}, {"state": None}, {"ask": None}, {"incarnation": None}, {"harness": None}, {"seq": -1},
     {"exit": 0}],
)
def test_a_wrongly_typed_field_reads_malformed(clock: FakeClock, change: dict) -> None:
    assert read(record(clock.wall_ms(), **change), clock.wall_ms()).reason == "malformed-record"


def test_additive_fields_and_absent_optionals_decode(clock: FakeClock) -> None:
    now = clock.wall_ms()
    observed = read(record(now, futureField={"x": 1}, ask=DROP, incarnation=DROP, seq=DROP), now)
    assert (observed.state, observed.ask, observed.reason) == ("active", "none", None)


def test_a_foreign_schema_reads_unsupported_schema(clock: FakeClock) -> None:
    now = clock.wall_ms()
    observed = read(record(now, schema="st2.harness-state.v2"), now)
    assert (observed.state, observed.reason, observed.harness) == ("unknown", "unsupported-schema", "claude")
    assert read(record(now, schema="com.example.harness-state.v1"), now).reason == "unsupported-schema"


def test_staleness_fires_at_fifteen_minutes_from_the_embedded_stamp(clock: FakeClock) -> None:
    value = record(clock.wall_ms())
    clock.advance(15 * 60 - 0.001)
    assert read(value, clock.wall_ms()).state == "active"
    clock.advance(0.001)
    observed = read(value, clock.wall_ms())
    assert (observed.state, observed.reason) == ("unknown", "stale")


def test_future_skew_fires_beyond_sixty_seconds(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert read(record(now, writtenAtMs=now + MINUTE), now).state == "active"
    assert read(record(now, writtenAtMs=now + MINUTE + 1), now).reason == "future-skew"


def test_a_written_unknown_is_refused(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert read(record(now, state="unknown"), now).reason == "literal-unknown"
    # A future state word decodes as unknown too: never as a definite state.
    assert read(record(now, state="napping"), now).reason == "literal-unknown"
    assert read(record(now, state="idle"), now).state == "idle"


def test_future_axis_words_decode_as_unknown_not_a_definite_word(clock: FakeClock) -> None:
    now = clock.wall_ms()
    observed = read(record(now, blockedOn="robot", inputBuffer="half", ask="survey"), now)
    assert (observed.state, observed.blocked_on, observed.input_buffer, observed.ask) == (
        "active", "unknown", "unknown", "unknown")


def test_the_claim_placeholder_reads_claimed_but_a_real_ended_survives(clock: FakeClock) -> None:
    now = clock.wall_ms()
    claim = record(now, state="ended", reason="superseded", exit=DROP, ptySession=DROP)
    assert read(claim, now).reason == "claimed"
    ended = record(now, state="ended", exit="exit 0", ptySession="host.worker")
    dead = lambda session: "dead"  # noqa: E731
    observed = read(ended, now, dead)
    assert (observed.state, observed.exit) == ("ended", "exit 0")


def test_a_live_state_whose_session_is_dead_reads_session_dead(clock: FakeClock) -> None:
    now = clock.wall_ms()
    asked: list[str] = []

    def probe(session: str) -> str:
        asked.append(session)
        return {"host.worker": "dead"}.get(session, "alive")

    assert read(record(now), now, probe).reason == "session-dead"
    assert asked == ["host.worker"]
    assert read(record(now, ptySession="host.other"), now, probe).state == "active"


def test_an_indeterminate_or_failing_probe_downgrades_nothing(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert read(record(now), now, lambda session: "indeterminate").state == "active"

    def broken(session: str) -> str:
        raise OSError("registry unreadable")

    assert read(record(now), now, broken).state == "active"


def test_an_unfenced_live_record_reads_unknown_only_when_a_probe_is_given(clock: FakeClock) -> None:
    now = clock.wall_ms()
    unfenced = record(now, ptySession=DROP)
    assert read(unfenced, now, lambda session: "alive").reason == "unfenced-record"
    assert read(unfenced, now).state == "active"


def test_an_unreadable_file_is_unknown_and_a_missing_one_is_none(tmp_path: Path, clock: FakeClock) -> None:
    assert harness_state.read_file(tmp_path / "harness-state", clock.wall_ms()) is None
    (tmp_path / "harness-state").mkdir()  # exists, cannot be read as a file
    assert harness_state.read_file(tmp_path / "harness-state", clock.wall_ms()).reason == "unreadable-record"


def test_every_unknown_reason_is_distinct() -> None:
    reasons = [harness_state.REASON_UNREADABLE, harness_state.REASON_MALFORMED,
               harness_state.REASON_UNSUPPORTED_SCHEMA, harness_state.REASON_FUTURE_SKEW,
               harness_state.REASON_STALE, harness_state.REASON_LITERAL_UNKNOWN, harness_state.REASON_CLAIMED,
               harness_state.REASON_UNFENCED, harness_state.REASON_SESSION_DEAD]
    assert len(set(reasons)) == 9


@pytest.mark.parametrize("word, blocked", [("human", True), ("none", False), ("unknown", False), (None, False)])
def test_the_blocked_on_human_rule_fires_only_on_human(word, blocked) -> None:
    # st2 top's blocked-first order and the blocked event's transition both decide through it.
    assert harness_state.blocked_on_human(word) is blocked


def test_an_observation_says_whether_it_is_blocked_stale_and_when_it_goes_stale(clock: FakeClock) -> None:
    now = clock.wall_ms()
    blocked = read(record(now, blockedOn="human", ask="permission"), now)
    assert (blocked.blocked_on_human, read(record(now), now).blocked_on_human) == (True, False)
    fresh = read(record(now), now)
    assert (fresh.is_stale, fresh.stale_at_ms()) == (False, now + harness_state.HARNESS_STATE_STALE_MS)
    stale = read(record(now, writtenAtMs=now - 15 * MINUTE), now)
    assert (stale.state, stale.reason, stale.is_stale, stale.stale_at_ms()) == ("unknown", "stale", True, None)
    # Another unknown is not stale, and one without a trusted stamp has no horizon.
    skewed = read(record(now, writtenAtMs=now + 2 * MINUTE), now)
    assert (skewed.is_unknown, skewed.is_stale) == (True, False)
    malformed = harness_state.read(b"{", now)
    assert (malformed.is_stale, malformed.stale_at_ms()) == (False, None)
