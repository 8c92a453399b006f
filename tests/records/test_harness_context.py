"""Harness context reader: the table of docs/records.md §Harness context reader in evaluation order, each arm with a firing
and a non-firing case, on a FakeClock; the roster's context object as a full string."""

from __future__ import annotations

import json
import logging

import pytest

from st2.base.clock import FakeClock
from st2.records import harness_context
from support import compact

MINUTE = 60_000
DROP = object()


def record(now: int, **changes) -> dict:
    value = {
        "schema": "st2.harness-context.v1", "agent": "host.worker", "harness": "codex", "usedTokens": 92283,
        "windowTokens": 258400, "usedPercent": 33, "model": None, "costUsd": None, "sessionTotalTokens": 2235329,
        "rateLimits": {"fiveHour": 31, "sevenDay": 55}, "compactions": 3, "lastCompactionMs": 1788000097290,
        "lastCompactionTrigger": "unknown", "incarnation": "token-1", "observedAtMs": now - 4210,
        "writtenAtMs": now - 4210,
    }
    value.update(changes)
    return {key: item for key, item in value.items() if item is not DROP}


def read(value: dict, now: int):
    return harness_context.read(json.dumps(value).encode(), now)


def test_the_roster_context_object_is_the_seed_example_in_order(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert compact(harness_context.to_wire(read(record(now), now))) == (
        '{"harness":"codex","usedTokens":92283,"windowTokens":258400,"usedPercent":33.0,"model":null,'
        '"costUsd":null,"sessionTotalTokens":2235329,"rateLimits":{"fiveHour":31.0,"sevenDay":55.0},'
        '"rateLimited":false,"compactions":3,"lastCompactionMs":1788000097290,"lastCompactionTrigger":"unknown",'
        f'"observedAtMs":{now - 4210},"ageMs":4210,"stale":false}}'
    )


def test_no_record_reads_none(clock: FakeClock) -> None:
    assert harness_context.read(None, clock.wall_ms()) is None
    assert harness_context.to_wire(None) is None


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1]", b'{"schema":"st2.harness-context.v1"}', b"\xff",
                                 b'{"usedPercent":NaN}'])
def test_unparseable_bytes_read_none_with_a_warning(clock: FakeClock, caplog, raw: bytes) -> None:
    with caplog.at_level(logging.WARNING, logger="st2.records"):
        assert harness_context.read(raw, clock.wall_ms()) is None
    assert [entry.name for entry in caplog.records] == ["st2.records"]


@pytest.mark.parametrize(
    "change",
    [{"observedAtMs": DROP}, {"usedTokens": -1}, {"usedTokens": 1.5}, {"usedPercent": "33"}, {"usedPercent": True},
     {"rateLimits": None}, {"rateLimits": [31]}, {"rateLimits": {"fiveHour": "x"}}, {"compactions": None},
     {"lastCompactionTrigger": 5}, {"model": 5}, {"incarnation": None}, {"harness": None}],
)
def test_a_wrongly_typed_field_reads_none(clock: FakeClock, change: dict) -> None:
    assert read(record(clock.wall_ms(), **change), clock.wall_ms()) is None


@pytest.mark.parametrize("schema", ["com.example.harness-context.v1", "st2.harness-context", "st2.harness-context.v3"])
def test_a_schema_outside_v1_and_v2_reads_none_with_a_warning(clock: FakeClock, caplog, schema: str) -> None:
    now = clock.wall_ms()
    with caplog.at_level(logging.WARNING, logger="st2.records"):
        assert read(record(now, schema=schema), now) is None
    assert "schema" in caplog.text


@pytest.mark.parametrize("schema", ["st2.harness-context.v1", "st2.harness-context.v2"])
def test_both_accepted_versions_read(clock: FakeClock, schema: str) -> None:
    now = clock.wall_ms()
    assert read(record(now, schema=schema), now).used_tokens == 92283


def test_an_unrecognized_harness_reads_none_with_a_warning(clock: FakeClock, caplog) -> None:
    now = clock.wall_ms()
    with caplog.at_level(logging.WARNING, logger="st2.records"):
        assert read(record(now, harness="gemini"), now) is None
    assert "gemini" in caplog.text
    for harness in harness_context.HARNESSES:
        assert read(record(now, harness=harness), now).harness == harness


def test_an_observation_beyond_the_future_skew_reads_none(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert read(record(now, observedAtMs=now + MINUTE), now).age_ms == 0
    assert read(record(now, observedAtMs=now + MINUTE + 1), now) is None


def test_past_sixty_minutes_the_reading_is_returned_stale_with_its_age(clock: FakeClock) -> None:
    value = record(clock.wall_ms(), observedAtMs=clock.wall_ms())
    clock.advance(60 * 60 - 0.001)
    fresh = read(value, clock.wall_ms())
    assert (fresh.stale, fresh.age_ms) == (False, 60 * MINUTE - 1)
    clock.advance(0.001)
    stale = read(value, clock.wall_ms())
    assert (stale.stale, stale.age_ms, stale.used_tokens) == (True, 60 * MINUTE, 92283)


def test_freshness_comes_from_observed_at_not_written_at(clock: FakeClock) -> None:
    now = clock.wall_ms()
    reading = read(record(now, observedAtMs=now - 70 * MINUTE, writtenAtMs=now), now)
    assert reading.stale


def test_used_percent_above_one_hundred_is_carried_unclamped(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert harness_context.to_wire(read(record(now, harness="pi", usedPercent=585.6), now))["usedPercent"] == 585.6
    assert harness_context.to_wire(read(record(now, usedPercent=99.5), now))["usedPercent"] == 99.5


def test_withheld_values_stay_null_and_are_never_derived(clock: FakeClock) -> None:
    now = clock.wall_ms()
    wire = harness_context.to_wire(read(record(now, harness="claude", usedTokens=None, usedPercent=DROP,
                                               rateLimits=DROP, compactions=DROP, lastCompactionMs=DROP,
                                               lastCompactionTrigger=DROP), now))
    assert (wire["usedTokens"], wire["windowTokens"], wire["usedPercent"]) == (None, 258400, None)
    assert wire["rateLimits"] == {"fiveHour": None, "sevenDay": None}
    assert (wire["compactions"], wire["lastCompactionMs"], wire["lastCompactionTrigger"]) == (0, None, None)


@pytest.mark.parametrize("word", ["manual", "auto", "threshold", "overflow", "idle", "unknown"])
def test_known_trigger_words_decode_as_themselves(clock: FakeClock, word: str) -> None:
    now = clock.wall_ms()
    assert read(record(now, lastCompactionTrigger=word), now).last_compaction_trigger == word


def test_an_unrecognized_trigger_word_decodes_as_unknown(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert read(record(now, lastCompactionTrigger="sleepy"), now).last_compaction_trigger == "unknown"


def test_rate_limited_needs_fresh_claude_evidence_of_an_exhausted_window(clock: FakeClock) -> None:
    now = clock.wall_ms()
    exhausted = {"fiveHour": 100, "sevenDay": 40}
    assert read(record(now, harness="claude", rateLimits=exhausted), now).rate_limited
    assert not read(record(now, harness="claude", rateLimits={"fiveHour": 99.9, "sevenDay": None}), now).rate_limited
    # Codex can continue through credits: its account occupancy never classifies availability.
    assert not read(record(now, harness="codex", rateLimits=exhausted), now).rate_limited
    assert not read(record(now, harness="claude", rateLimits=exhausted, observedAtMs=now - 61 * MINUTE), now).rate_limited


def test_a_stale_reading_survives_with_its_numbers(clock: FakeClock) -> None:
    now = clock.wall_ms()
    wire = harness_context.to_wire(read(record(now, observedAtMs=now - 3 * 60 * MINUTE), now))
    assert (wire["usedTokens"], wire["ageMs"], wire["stale"]) == (92283, 3 * 60 * MINUTE, True)


@pytest.mark.parametrize("agent, fenced", [("host.worker", False), ("worker", False), ("host.other", True),
                                           ("other", True), ("elsewhere.worker", True)])
def test_a_record_naming_another_seat_reads_absent_for_this_one(clock: FakeClock, caplog, agent: str,
                                                                fenced: bool) -> None:
    now = clock.wall_ms()
    data = json.dumps(record(now, agent=agent)).encode()
    with caplog.at_level(logging.WARNING, logger="st2.records"):
        reading = harness_context.read(data, now, "host.worker")
    assert (reading is None) == fenced
    assert bool(caplog.records) == fenced
    assert harness_context.read(data, now) is not None  # no seat named: nothing to fence against


@pytest.mark.parametrize("percent, advised", [
    (80.0, True), (80, True), (585.6, True), (79.99, False), (0.0, False), (None, False), (True, False),
    ("95", False), (float("nan"), False),
])
def test_the_context_fill_rule_fires_at_the_warn_percent_and_never_on_a_withheld_value(percent, advised) -> None:
    # Doctor's context-fill advisory and the context event's crossing both decide through it.
    assert harness_context.fill_advised(percent) is advised


def test_a_reading_fill_and_stale_horizon_come_from_its_own_fields(clock: FakeClock) -> None:
    now = clock.wall_ms()
    full, low = read(record(now, usedPercent=80), now), read(record(now, usedPercent=79.9), now)
    assert (full.fill_advised, low.fill_advised) == (True, False)
    assert read(record(now, usedPercent=None), now).fill_advised is False
    assert full.stale_at_ms() == now - 4210 + harness_context.HARNESS_CONTEXT_STALE_MS
    old = read(record(now, observedAtMs=now - 61 * MINUTE), now)
    assert (old.stale, old.stale_at_ms()) == (True, None)


def test_one_reading_type_serves_the_producer_the_record_and_the_projection(clock: FakeClock) -> None:
    now = clock.wall_ms()
    data = json.dumps(record(now)).encode()
    decoded, projected = harness_context.decode(data), harness_context.read(data, now)
    produced = harness_context.Reading(used_tokens=1, window_tokens=10, used_percent=10.0)
    assert type(decoded) is type(projected) is type(produced) is harness_context.Reading
    assert (decoded.age_ms, decoded.stale) == (None, False)  # the record stage: not yet projected
    assert (projected.age_ms, projected.stale) == (4210, False)
    assert projected._replace(age_ms=None) == decoded  # the projection adds only its age and staleness
    assert harness_context.encode(projected) == harness_context.encode(decoded)  # neither is on the record
    assert (produced.harness, produced.compactions, produced.incarnation) == (None, 0, "")
