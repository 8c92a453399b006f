"""Codex's context arithmetic, rate limits and compaction dedupe (docs/drivers.md §Codex), pinned to the
0.171.0 lab capture: the published number and the wrong numbers the same capture would yield."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.drivers.codex import MEASURED_VERSIONS
from st2.drivers.codex.context import BASELINE_TOKENS, ContextProducer, remaining_percent, rust_round, used_percent

CAPTURE = Path(__file__).parents[3] / "captures" / "codex" / "0.171.0" / "lab" / "app-server.harness.jsonl"


def frames() -> list[dict]:
    return [json.loads(line) for line in CAPTURE.read_text().splitlines() if line.strip()]


def test_the_baseline_and_the_verified_version_are_pinned() -> None:
    assert (BASELINE_TOKENS, MEASURED_VERSIONS) == (12_000, ("0.171.0",))
    assert "0.171.0" in (CAPTURE.parent / "PROVENANCE.md").read_text()


def test_the_exact_half_case_publishes_what_codex_displays() -> None:
    # Effective window 200, used 101: Codex shows "50% left", so st2 publishes 50; rounding the
    # used fraction instead would publish 51.
    window, last_total = BASELINE_TOKENS + 200, BASELINE_TOKENS + 101
    assert remaining_percent(window, last_total) == 50
    assert used_percent(window, last_total) == 50
    assert rust_round(101 / 200 * 100) == 51  # the wrong order


def test_where_rust_and_python_rounding_differ_the_mirror_follows_rust() -> None:
    # Remaining 97 of 200 is 48.5 %: Rust rounds half away from zero (49 left, 51 used); Python's
    # round() would say 48 left, 52 used.
    window, last_total = BASELINE_TOKENS + 200, BASELINE_TOKENS + 103
    assert round(97 / 200 * 100) == 48 and rust_round(97 / 200 * 100) == 49
    assert used_percent(window, last_total) == 51
    assert [rust_round(value) for value in (0.5, 1.5, 2.5, -0.5, -2.5)] == [1, 2, 3, -1, -3]


@pytest.mark.parametrize("window, last_total, expected", [
    (None, 5000, None),          # no window: withheld
    (12_000, 5000, None),        # at the baseline: Codex says 0 % left; st2 withholds, never 100
    (11_000, 50_000, None),
    (258_400, None, None),       # no numerator
    (258_400, 9_942, 0),         # below the baseline: nothing user-controllable used yet
    (258_400, 92_283, 33),       # the measured capture: Codex showed "67% context left"
    (200_000, 250_000, 100),     # an overrun saturates inside Codex's own function
])
def test_the_mirrored_function_withholds_and_saturates_as_codex_does(window, last_total, expected) -> None:
    assert used_percent(window, last_total) == expected


def test_the_0_171_0_capture_publishes_the_mirrored_percent_and_not_the_wrong_numbers() -> None:
    producer = ContextProducer()
    readings = []
    for frame in frames():
        reading, _ = producer.on_frame(frame)
        if reading is not None:
            readings.append((frame, reading))
    frame, reading = readings[0]
    usage = frame["params"]["tokenUsage"]
    assert (reading.used_tokens, reading.window_tokens, reading.session_total_tokens) == (9942, 190000, 9942)
    assert reading.used_percent == 0  # 9,942 is below the 12,000 baseline
    assert reading.model is None and reading.cost_usd is None
    frame, reading = readings[-1]
    usage = frame["params"]["tokenUsage"]
    assert (reading.used_tokens, reading.window_tokens, reading.session_total_tokens) == (9942, 190000, 69594)
    # The wrong numbers the same capture would yield:
    assert usage["total"]["totalTokens"] / usage["modelContextWindow"] * 100 > 36  # total is not occupancy
    assert round(usage["last"]["totalTokens"] / usage["modelContextWindow"] * 100) == 5  # baseline-free
    assert round(usage["last"]["inputTokens"] / usage["modelContextWindow"] * 100) == 5  # inputTokens alone
    assert reading.used_percent == 0
    # After the compaction Codex's `last` is an estimate with only totalTokens (inputTokens 0).
    after = [reading for frame, reading in readings if frame["params"]["tokenUsage"]["last"]["inputTokens"] == 0]
    assert [reading.used_tokens for reading in after] == [7155]


def test_rate_limits_join_by_window_duration_and_merge_sparsely() -> None:
    producer = ContextProducer()
    for frame in frames():
        producer.on_frame(frame)
    # 0.171.0 lab capture: primary is a 300-minute window, secondary the 10080-minute one. The
    # 300-minute window is st2's own fake server's x-codex-* header, not Codex's: fiveHour stays
    # null until a real account's capture shows it (captures/PROVENANCE.md §Codex rate-limit windows).
    assert (producer.five_hour, producer.seven_day) == (None, 34.0)
    producer.on_rate_limits({"rateLimits": {"primary": {"usedPercent": 77, "windowDurationMins": 10080},
                                            "secondary": {"usedPercent": 12, "windowDurationMins": 300}}})
    assert (producer.five_hour, producer.seven_day) == (None, 77.0)  # joined by duration, not position
    producer.on_rate_limits({"rateLimits": {"primary": {"usedPercent": 99, "windowDurationMins": 60}}})
    assert (producer.five_hour, producer.seven_day) == (None, 77.0)  # an unknown duration is dropped
    reading = producer.on_token_usage({"tokenUsage": {"last": {"totalTokens": 1}, "total": {"totalTokens": 1},
                                                      "modelContextWindow": 200000}})
    assert reading.rate_limits.to_json() == {"fiveHour": None, "sevenDay": 77.0}  # rides the next reading


def test_one_compaction_counts_once_on_turn_and_item_id() -> None:
    producer = ContextProducer()
    edges = [edge for frame in frames() for _, edge in [producer.on_frame(frame)] if edge is not None]
    assert [edge.trigger for edge in edges] == ["unknown"]  # item/started + item/completed = one
    assert producer.on_compaction("turn-x", "item-1") is not None
    assert producer.on_compaction("turn-x", "item-2") is not None  # two items in one turn: two
    assert producer.on_compaction("turn-x", None) is None           # the deprecated form collapses
    assert producer.on_compaction("turn-y", None) is not None
    assert producer.on_compaction("turn-y", "item-3") is None


WIRE = CAPTURE.parent / "wrapper-wire.jsonl"


def test_the_wrappers_0_171_0_wire_above_the_baseline_pins_the_number_and_the_wrong_ones() -> None:
    from st2.drivers.codex.replay import frames as wire_frames

    producer = ContextProducer()
    readings = [(frame, reading) for frame in wire_frames(WIRE)
                for reading, _ in [producer.on_frame(frame)] if reading is not None]
    frame, reading = next((frame, reading) for frame, reading in readings if reading.used_tokens == 101300
                          and frame["params"]["tokenUsage"]["total"]["totalTokens"] == 202600)
    usage = frame["params"]["tokenUsage"]
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent) == (101300, 190000, 50)
    assert round(usage["total"]["totalTokens"] / usage["modelContextWindow"] * 100) == 107  # total is spend
    assert round(usage["last"]["totalTokens"] / usage["modelContextWindow"] * 100) == 53   # baseline-free
    assert round(usage["last"]["inputTokens"] / usage["modelContextWindow"] * 100) == 53   # inputTokens alone
    assert reading.session_total_tokens == 202600


def test_replaying_the_captured_wire_reproduces_the_live_record(tmp_path) -> None:
    from st2.base.clock import FakeClock
    from st2.drivers.codex.replay import replay
    from st2.drivers.seat import Seat

    directory = tmp_path / "agents" / "labhost" / "coder"
    directory.mkdir(parents=True)
    list(replay(WIRE, Seat(directory, "labhost.coder"), FakeClock()))
    replayed = json.loads((directory / "harness-context").read_text())
    live = json.loads((CAPTURE.parent / "wrapper-wire.live-context.json").read_text())
    fields = ("harness", "usedTokens", "windowTokens", "usedPercent", "model", "costUsd", "sessionTotalTokens",
              "compactions", "lastCompactionTrigger")
    assert {key: replayed[key] for key in fields} == {key: live[key] for key in fields}
    # The live record was written while st2 still joined the fake server's 300-minute window
    # (13.0); fiveHour is null now, the seven-day window unchanged.
    assert live["rateLimits"] == {"fiveHour": 13.0, "sevenDay": 34.0}
    assert replayed["rateLimits"] == {"fiveHour": None, "sevenDay": 34.0}
    assert (live["usedPercent"], live["compactions"]) == (5.0, 2)
