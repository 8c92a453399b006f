"""Millisecond stamps a reader takes: 0 to MAX_STAMP_MS (the last millisecond a UTC datetime
renders); past it a record reads as malformed by its own rules, never as a far-future instant."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from roster_fixture import context_record, state_record
from st2.records import decoding, harness_context, harness_state

NOW_MS = 1_788_000_100_000


def test_the_bound_is_the_last_millisecond_a_datetime_renders() -> None:
    assert datetime.fromtimestamp(decoding.MAX_STAMP_MS // 1000, tz=timezone.utc).year == 9999
    with pytest.raises((ValueError, OverflowError)):
        datetime.fromtimestamp(decoding.MAX_STAMP_MS // 1000 + 1, tz=timezone.utc)
    assert [decoding.is_stamp(value) for value in (0, decoding.MAX_STAMP_MS, decoding.MAX_STAMP_MS + 1, -1, True, 1.0)] \
        == [True, True, False, False, False, False]


@pytest.mark.parametrize("since_ms", [decoding.MAX_STAMP_MS + 1, 10**17])
def test_a_harness_state_since_past_the_bound_reads_malformed(since_ms: int) -> None:
    record = state_record("a", "active", NOW_MS - 1000, sinceMs=since_ms)
    observed = harness_state.read(json.dumps(record).encode(), NOW_MS)
    assert (observed.state, observed.reason) == ("unknown", "malformed-record")
    fine = harness_state.read(json.dumps({**record, "sinceMs": NOW_MS - 5000}).encode(), NOW_MS)
    assert (fine.state, fine.since_ms) == ("active", NOW_MS - 5000)


def test_a_harness_context_last_compaction_past_the_bound_reads_absent() -> None:
    record = context_record("a", "codex", NOW_MS - 1000, compactions=3, lastCompactionMs=10**17)
    assert harness_context.read(json.dumps(record).encode(), NOW_MS) is None
    fine = harness_context.read(json.dumps({**record, "lastCompactionMs": decoding.MAX_STAMP_MS}).encode(), NOW_MS)
    assert fine is not None and fine.last_compaction_ms == decoding.MAX_STAMP_MS
