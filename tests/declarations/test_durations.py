"""Durations (unit tier): the one parser st2 reads them with, bounded at 365 days, refusing a
longer or malformed value with its reason, never converting an unbounded amount."""

from __future__ import annotations

import pytest

from st2.declarations.durations import (MAX_DURATION_SECONDS, DurationRefused, parse_duration,
                                        parse_duration_seconds)


@pytest.mark.parametrize("text, seconds", [
    ("0", 0.0), ("45", 45.0), ("500ms", 0.5), ("60s", 60.0), ("5m", 300.0), ("2h", 7200.0), ("7d", 604800.0),
    ("365d", MAX_DURATION_SECONDS), ("31536000000ms", MAX_DURATION_SECONDS), ("8760h", MAX_DURATION_SECONDS),
    ("0000000000000000000000000000005s", 5.0),  # leading zeros are no magnitude
])
def test_a_duration_within_the_bound_reads_as_its_seconds(text, seconds):
    assert parse_duration(text) == seconds
    assert parse_duration_seconds(text) == seconds


@pytest.mark.parametrize("text, reason", [
    ("366d", '"366d" is longer than the maximum, 365d'),
    ("31536000001ms", '"31536000001ms" is longer than the maximum, 365d'),
    ("99999999999d", '"99999999999d" is longer than the maximum, 365d'),
    ("9" * 400 + "s", f'"{"9" * 24}…" (401 characters) is longer than the maximum, 365d'),  # once an OverflowError
    ("9" * 5000, f'"{"9" * 24}…" (5000 characters) is longer than the maximum, 365d'),  # once a ValueError
    ("often", '"often" is not a duration'),
    ("-5s", '"-5s" is not a duration'),
    ("٣s", '"٣s" is not a duration'),  # a non-ASCII digit is no digit here
], ids=lambda value: f"{len(value)}-characters" if isinstance(value, str) and len(value) > 300 else None)
def test_a_longer_or_malformed_duration_is_refused_with_its_reason(text, reason):
    with pytest.raises(DurationRefused) as refused:
        parse_duration(text)
    assert str(refused.value) == reason
    assert parse_duration_seconds(text) is None


def test_a_knob_may_name_a_smaller_maximum_but_never_a_larger_one():
    assert parse_duration("1d", maximum="1d") == 86400.0
    with pytest.raises(DurationRefused, match=r'^"25h" is longer than the maximum, 1d$'):
        parse_duration("25h", maximum="1d")
    with pytest.raises(DurationRefused):
        parse_duration("400d", maximum="1000d")
