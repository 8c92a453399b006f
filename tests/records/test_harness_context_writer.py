"""The harness-context write policy, one test per clause of docs/records.md
§Write policy, each with its non-firing twin, on a FakeClock through the real writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import harness_context, harness_state
from st2.records.harness_context import CompactionEdge, RateLimits, Reading, Writer

WINDOW = 258_400


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


def writer(seat: Path, clock: FakeClock, harness: str = "codex", incarnation: str = "session-1") -> Writer:
    return Writer(seat, "host.worker", harness, incarnation, clock)


def fill(percent: float | None, clock: FakeClock, **extra) -> Reading:
    used = None if percent is None else int(WINDOW * percent / 100)
    return Reading(used_tokens=used, window_tokens=WINDOW, used_percent=percent, observed_at_ms=clock.wall_ms(), **extra)


def on_disk(seat: Path) -> dict:
    return json.loads((seat / "harness-context").read_bytes())


def test_a_reading_inside_the_written_bucket_is_not_written(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    assert w.publish(fill(33.1, clock))
    clock.advance(10)
    assert not w.publish(fill(33.9, clock))
    assert on_disk(seat)["usedPercent"] == 33.1


def test_a_bucket_crossing_is_written(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    w.publish(fill(33.9, clock))
    clock.advance(1)
    assert w.publish(fill(34.0, clock))
    assert on_disk(seat)["usedPercent"] == 34.0
    clock.advance(1)
    assert w.publish(fill(33.95, clock))  # downward crossings count too


def test_a_withheld_percent_has_no_bucket(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="claude")
    w.publish(fill(None, clock))
    clock.advance(5)
    assert not w.publish(fill(None, clock))  # withheld -> withheld: nothing new
    clock.advance(5)
    assert w.publish(fill(12.0, clock))  # withheld -> known crosses
    clock.advance(5)
    assert w.publish(fill(None, clock))  # known -> withheld crosses, and is carried as null
    assert (on_disk(seat)["usedPercent"], on_disk(seat)["usedTokens"]) == (None, None)


def test_the_heartbeat_rewrites_only_a_fresh_reading(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    first = fill(40.2, clock)
    w.publish(first)
    clock.advance(299)
    assert not w.publish(fill(40.4, clock))  # fresh, same bucket, heartbeat not yet due
    clock.advance(1)
    assert not w.publish(first)  # due, but the producer holds no reading taken since the write
    assert on_disk(seat)["observedAtMs"] == first.observed_at_ms
    fresh = fill(40.4, clock)
    assert w.publish(fresh)
    assert on_disk(seat)["observedAtMs"] == fresh.observed_at_ms


def test_a_heartbeat_is_measured_from_the_write_not_the_reading(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    w.publish(Reading(used_percent=10.0, observed_at_ms=clock.wall_ms() - 240_000))
    # 70 s after the write the reading is 310 s old: past the 300 s heartbeat if it were measured
    # from the reading, well inside it measured from the write.
    clock.advance(70)
    assert not w.publish(fill(10.5, clock))
    clock.advance(229)
    assert not w.publish(fill(10.6, clock))  # 299 s after the write: still not due
    clock.advance(1)
    assert w.publish(fill(10.7, clock))  # the twin: 300 s after the write the heartbeat lands


def test_a_heartbeat_needs_a_reading_taken_since_the_write(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    w.publish(Reading(used_percent=10.0, observed_at_ms=clock.wall_ms() - 240_000))
    clock.advance(300)
    # Newer than the written reading, but taken before the write: re-publishing it would re-stamp
    # old news as fresh.
    assert not w.publish(Reading(used_percent=10.2, observed_at_ms=clock.wall_ms() - 400_000))
    assert w.publish(fill(10.3, clock))  # the twin: taken now, it lands


def plant_written_at(seat: Path, clock: FakeClock, ahead_ms: int) -> None:
    """Rewrite the on-disk record's writtenAtMs to ``ahead_ms`` past the clock (a skewed writer)."""
    record = on_disk(seat)
    record["writtenAtMs"] = clock.wall_ms() + ahead_ms
    (seat / "harness-context").write_text(json.dumps(record, separators=(",", ":")) + "\n")


def test_a_record_stamped_beyond_the_future_skew_is_old_and_its_stamp_not_inherited(seat: Path,
                                                                                    clock: FakeClock) -> None:
    w = writer(seat, clock)
    w.publish(fill(30.0, clock))
    clock.advance(1)
    plant_written_at(seat, clock, 59_000)  # inside the 60 s skew bound: a fresh record
    assert not w.publish(fill(30.1, clock))
    plant_written_at(seat, clock, 61_000)  # beyond it: counts as old, so the heartbeat is due
    assert w.publish(fill(30.2, clock))
    assert on_disk(seat)["writtenAtMs"] == clock.wall_ms()  # the future stamp is not continued


def test_a_compaction_edge_always_lands(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    reading = fill(50.0, clock)
    w.publish(reading)
    assert not w.publish(reading)  # the twin: the same reading without an edge is skipped
    clock.advance(1)
    assert w.publish(None, CompactionEdge("manual"))
    record = on_disk(seat)
    assert (record["compactions"], record["lastCompactionTrigger"], record["lastCompactionMs"]) == (
        1, "manual", clock.wall_ms())
    # An edge with no reading behind it carries the numbers and does not re-stamp the reading.
    assert (record["usedPercent"], record["observedAtMs"]) == (50.0, reading.observed_at_ms)
    clock.advance(1)
    assert w.publish(fill(5.0, clock), CompactionEdge("sleepy"))
    assert (on_disk(seat)["compactions"], on_disk(seat)["lastCompactionTrigger"]) == (2, "unknown")
    clock.advance(1)
    # An edge beside a reading the policy alone would skip (same bucket, no heartbeat) still lands.
    assert not w.publish(fill(5.1, clock))
    assert w.publish(fill(5.2, clock), CompactionEdge("auto"))
    assert (on_disk(seat)["compactions"], on_disk(seat)["usedPercent"]) == (3, 5.2)


def test_a_harness_durable_count_is_carried_as_given(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="pi")
    w.publish(None, CompactionEdge("threshold", count=7))
    assert on_disk(seat)["compactions"] == 7
    clock.advance(1)
    w.publish(None, CompactionEdge("overflow"))  # a countless edge degrades to st2 counting
    assert on_disk(seat)["compactions"] == 8


def test_claude_exhaustion_and_reset_inside_one_bucket_are_written(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="claude")
    w.publish(fill(20.0, clock, rate_limits=RateLimits(five_hour=99.0, seven_day=40.0)))
    clock.advance(5)
    assert not w.publish(fill(20.1, clock, rate_limits=RateLimits(five_hour=99.5, seven_day=40.0)))
    clock.advance(5)
    assert w.publish(fill(20.2, clock, rate_limits=RateLimits(five_hour=100.0, seven_day=40.0)))
    assert harness_context.read_file(seat / "harness-context", clock.wall_ms()).rate_limited
    clock.advance(5)
    assert w.publish(fill(20.3, clock, rate_limits=RateLimits(five_hour=3.0, seven_day=40.0)))
    assert not harness_context.read_file(seat / "harness-context", clock.wall_ms()).rate_limited


def test_codex_account_occupancy_does_not_classify_availability(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="codex")
    w.publish(fill(20.0, clock, rate_limits=RateLimits(seven_day=99.0)))
    clock.advance(5)
    assert not w.publish(fill(20.2, clock, rate_limits=RateLimits(seven_day=100.0)))
    clock.advance(300)
    assert w.publish(fill(20.3, clock, rate_limits=RateLimits(seven_day=100.0)))  # lands by heartbeat only
    reading = harness_context.read_file(seat / "harness-context", clock.wall_ms())
    assert (reading.rate_limits.seven_day, reading.rate_limited) == (100.0, False)


def test_an_overrun_is_carried_unclamped(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="pi")
    w.publish(Reading(used_tokens=23425, window_tokens=4000, used_percent=585.6, observed_at_ms=clock.wall_ms()))
    assert on_disk(seat)["usedPercent"] == 585.6
    clock.advance(1)
    w.publish(Reading(used_tokens=3980, window_tokens=4000, used_percent=99.5, observed_at_ms=clock.wall_ms()))
    assert on_disk(seat)["usedPercent"] == 99.5


def test_withheld_values_are_never_filled_and_a_reading_replaces_wholesale(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock, harness="claude")
    w.publish(Reading(used_tokens=1000, window_tokens=200_000, used_percent=0.5, model="claude-x", cost_usd=1.25,
                      observed_at_ms=clock.wall_ms()))
    clock.advance(1)
    w.publish(Reading(window_tokens=200_000, observed_at_ms=clock.wall_ms()))
    record = on_disk(seat)
    assert [record[key] for key in ("usedTokens", "windowTokens", "usedPercent", "model", "costUsd")] == [
        None, 200_000, None, None, None]


def test_every_landed_write_is_byte_distinct_with_a_strictly_monotonic_stamp(seat: Path, clock: FakeClock) -> None:
    w = writer(seat, clock)
    seen, stamps = set(), []
    for index in range(20):  # same millisecond throughout
        assert w.publish(None, CompactionEdge("auto"))
        data = (seat / "harness-context").read_bytes()
        assert data not in seen
        seen.add(data)
        stamps.append(json.loads(data)["writtenAtMs"])
    assert stamps == sorted(set(stamps)) and stamps[0] == clock.wall_ms()


def test_a_straggler_write_lands_visibly_older(seat: Path, clock: FakeClock) -> None:
    old = writer(seat, clock, incarnation="old-session")
    old.publish(fill(90.0, clock))
    harness_state.claim(seat, "host.worker", "codex", "new-session", clock)
    assert not (seat / "harness-context").exists()
    new = writer(seat, clock, incarnation="new-session")
    clock.advance(1)
    new.publish(fill(3.0, clock))
    clock.advance(1)
    assert old.publish(fill(91.0, clock))  # incarnation is provenance, never a fence
    assert on_disk(seat)["incarnation"] == "old-session"
    clock.advance(1)
    assert new.publish(fill(4.0, clock))  # the next real reading overwrites it
    assert on_disk(seat)["incarnation"] == "new-session"


def test_the_relaunch_claim_removes_the_record(seat: Path, clock: FakeClock) -> None:
    writer(seat, clock).publish(fill(90.0, clock))
    harness_state.Writer(seat, "host.worker", "codex", clock, pty_session="host.worker").observe("active")
    assert harness_context.read_file(seat / "harness-context", clock.wall_ms()) is not None  # twin: no claim
    harness_state.claim(seat, "host.worker", "codex", "next-session", clock)
    assert harness_context.read_file(seat / "harness-context", clock.wall_ms()) is None


def test_an_uninterpretable_record_is_not_continued(seat: Path, clock: FakeClock) -> None:
    (seat / "harness-context").write_text('{"schema":"st2.harness-context.v9","compactions":40}\n')
    writer(seat, clock).publish(None, CompactionEdge("auto"))
    assert on_disk(seat)["compactions"] == 1


def test_staging_is_in_the_control_plane_and_never_inside_the_seat(seat: Path, catalog: Path,
                                                                    clock: FakeClock) -> None:
    w = writer(seat, clock)
    for index in range(5):
        clock.advance(1)
        w.publish(fill(float(index * 10), clock))
    assert sorted(path.name for path in seat.iterdir()) == [".harness-context.lock", "harness-context"]
    assert (catalog / ".st2" / "harness-context-staging").is_dir()
    assert list((catalog / ".st2" / "harness-context-staging").iterdir()) == []


def test_invalid_producer_values_are_refused(seat: Path, clock: FakeClock) -> None:
    with pytest.raises(ValueError):
        writer(seat, clock, harness="gemini")
    with pytest.raises(ValueError):
        writer(seat, clock).publish(Reading(used_percent=float("nan")))
    with pytest.raises(ValueError):
        writer(seat, clock).publish(Reading(used_tokens=-1))
    assert not (seat / "harness-context").exists()
