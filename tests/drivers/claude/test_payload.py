"""docs/drivers.md §Version-pinned producers: the Claude producer's arithmetic, pinned to verbatim captures of the exact builds it
was measured on. Each fixture asserts the number the producer must publish AND the wrong number
the same capture would yield under a plausible misreading, so a Claude bump that changes what a
key means without changing its shape fails here."""

from __future__ import annotations

from support_claude import capture, capture_lines

from st2.drivers.claude import MEASURED_VERSIONS, payload
from st2.records.harness_context import RateLimits, Reading


def test_the_pinned_builds_are_the_captured_ones() -> None:
    assert MEASURED_VERSIONS == ("2.1.197", "2.1.250", "2.1.328")
    assert payload.version(capture("2.1.328/statusline/02-statusline-stdin.json")) == "2.1.328"
    assert payload.version(capture_lines("2.1.197/statusline/statusline-stdin.jsonl")[1]) == "2.1.197"


def test_a_2_1_328_mid_session_payload_yields_claudes_own_triple() -> None:
    data = capture("2.1.328/statusline/02-statusline-stdin.json")
    assert data["version"] == "2.1.328"
    reading = payload.reading(data, observed_at_ms=7)
    assert reading == Reading(used_tokens=28030, window_tokens=1000000, used_percent=3, model="claude-opus-5-5",
                              cost_usd=0.041620000000000004, session_total_tokens=None,
                              rate_limits=RateLimits(None, None), observed_at_ms=7)
    usage = data["context_window"]["current_usage"]
    # The numerator is input + cache creation + cache read of the last response ...
    assert reading.used_tokens == usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    # ... and not the bare input (3030), nor input plus output (28055).
    assert reading.used_tokens != usage["input_tokens"] == 3030
    assert reading.used_tokens != data["context_window"]["total_input_tokens"] + usage["output_tokens"] == 28055
    # The percent is Claude's own integer, not st2's division of the operands (2.803).
    assert reading.used_percent == 3 and 28030 / 1000000 * 100 != 3


def test_a_2_1_328_pre_turn_payload_withholds_rather_than_reporting_zero() -> None:
    data = capture("2.1.328/statusline/01-statusline-stdin.json")
    assert data["version"] == "2.1.328"
    assert data["context_window"]["total_input_tokens"] == 0  # the zero derived from the absence
    reading = payload.reading(data)
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent) == (None, 1000000, None)
    assert reading.used_tokens != 0


def test_a_2_1_328_post_compaction_payload_withholds_again() -> None:
    data = capture("2.1.328/statusline/03-statusline-stdin.json")
    reading = payload.reading(data)
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent) == (None, 1000000, None)
    after = payload.reading(capture("2.1.328/statusline/04-statusline-stdin.json"))
    assert (after.used_tokens, after.window_tokens, after.used_percent) == (28050, 1000000, 3)


def test_the_2_1_197_lab_payloads_yield_the_fake_usage_arithmetic() -> None:
    lines = capture_lines("2.1.197/statusline/statusline-stdin.jsonl")
    assert {line["version"] for line in lines} == {"2.1.197"}
    first, second = payload.reading(lines[0]), payload.reading(lines[1])
    assert (first.used_tokens, first.window_tokens, first.used_percent) == (None, 1000000, None)
    # The fake model answered 9900 input + 300 cache creation + 1200 cache read, 42 output.
    assert (second.used_tokens, second.window_tokens, second.used_percent) == (11400, 1000000, 1)
    assert second.used_tokens not in (9900, 11442)
    assert second.model == "claude-opus-4-8[1m]"
    # Right after /compact this build reports an all-zero current_usage: Claude's own measured 0,
    # published as 0 (the withholding rule keys on a null current_usage, not on the zero).
    compacted = payload.reading(lines[12])
    assert lines[12]["context_window"]["current_usage"] is not None
    assert (compacted.used_tokens, compacted.used_percent) == (0, 0)


def test_the_documented_rate_limits_become_the_account_windows() -> None:
    data = capture("docs-2.1.239/statusline/statusline-stdin.docs-full-schema.json")
    reading = payload.reading(data)
    assert reading.rate_limits == RateLimits(five_hour=23.5, seven_day=41.2)
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent) == (15500, 200000, 8)
    assert reading.used_tokens != 15500 + 1200  # output is never occupancy
    assert (reading.model, reading.cost_usd, reading.session_total_tokens) == ("claude-opus-5", 0.01234, None)


def test_fields_of_the_wrong_shape_are_withheld_never_guessed() -> None:
    bent = {"context_window": {"total_input_tokens": "11400", "context_window_size": -1, "used_percentage": True,
                               "current_usage": {}},
            "model": {"id": 7}, "cost": {"total_cost_usd": "0.1"}, "rate_limits": {"five_hour": {"used_percentage": None}}}
    assert payload.reading(bent) == Reading()
    assert payload.reading(None) == Reading()
    assert payload.reading([1, 2]) == Reading()


def test_a_2_1_197_sonnet_200k_payload_rounds_like_claude_not_like_a_division() -> None:
    """Captured by this project's lab tier (the st2-rendered tee chaining to a recording
    renderer): the fake model answered 99000 input + 300 cache creation + 1200 cache read."""
    lines = capture_lines("2.1.197/statusline/st2-lab-sonnet-200k.jsonl")
    first, turn = lines[0], lines[1]
    assert (first["version"], turn["version"]) == ("2.1.197", "2.1.197")
    assert (payload.reading(first).used_tokens, payload.reading(first).window_tokens) == (None, 200000)
    reading = payload.reading(turn)
    assert (reading.used_tokens, reading.window_tokens, reading.used_percent) == (100500, 200000, 50)
    # The wrong numbers the same capture offers: st2's own division (50.25), and the bare
    # input over the window (49.5).
    assert reading.used_percent != 100500 * 100 / 200000 == 50.25
    assert reading.used_percent != 99000 * 100 / 200000 == 49.5
    assert reading.model == "claude-sonnet-4-5"
