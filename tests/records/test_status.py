"""Declared presence: every arm of the reading table with a firing and a non-firing case, and the
refresh rules, on a FakeClock."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.records import status
from st2.records.status import RefreshOutcome

MINUTE = 60_000


def v1(word: str, stamp: int) -> bytes:
    return f"{word}\nv1 {stamp}\n".encode()


def test_missing_reads_offline(clock: FakeClock) -> None:
    assert status.read(None, clock.wall_ms()).presence == "offline"
    assert status.read(v1("busy", clock.wall_ms()), clock.wall_ms()).presence == "busy"


@pytest.mark.parametrize("word", status.SETTABLE)
def test_each_settable_word_reads_back_fresh(clock: FakeClock, word: str) -> None:
    reading = status.read(v1(word, clock.wall_ms()), clock.wall_ms())
    assert (reading.presence, reading.form, reading.reason) == (word, "v1", None)


@pytest.mark.parametrize("raw", [b"garbage\n", b"", b" busy\n", b"BUSY\n", b"\xff\xfe\n", b"busy \nv1 1\n"])
def test_an_unrecognized_first_line_reads_offline(clock: FakeClock, raw: bytes) -> None:
    assert status.read(raw, clock.wall_ms(), clock.wall_ms()).presence == "offline"


def test_literal_unknown_reads_unknown_and_a_real_word_does_not(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert status.read(b"unknown\n", now, now).presence == "unknown"
    assert status.read(v1("unknown", now), now).reason == "literal-unknown"
    assert status.read(b"away\n", now, now).presence == "away"


@pytest.mark.parametrize(
    "raw",
    [b"available\nv2 100\n", b"available\nv1 nope\n", b"available\nv1 100", b"available\nv1 100\nextra\n",
     b"available\n\n", b"available\nv1 \n", b"available\nv1 -5\n", b"available\nv1 99999999999999999999999\n",
     "available\nv1 \u0661\u0662\n".encode()],
)
def test_a_malformed_version_line_reads_unknown_without_mtime_fallback(clock: FakeClock, raw: bytes) -> None:
    reading = status.read(raw, clock.wall_ms(), mtime_ms=clock.wall_ms())
    assert (reading.presence, reading.reason) == ("unknown", "malformed")


def test_a_v1_heartbeat_goes_unknown_at_exactly_fifteen_minutes(clock: FakeClock) -> None:
    record = v1("busy", clock.wall_ms())
    clock.advance(15 * 60 - 0.001)
    assert status.read(record, clock.wall_ms()).presence == "busy"
    clock.advance(0.001)
    reading = status.read(record, clock.wall_ms())
    assert (reading.presence, reading.reason) == ("unknown", "stale")


def test_a_v1_stamp_more_than_sixty_seconds_ahead_reads_unknown(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert status.read(v1("busy", now + MINUTE), now).presence == "busy"
    reading = status.read(v1("busy", now + MINUTE + 1), now)
    assert (reading.presence, reading.reason) == ("unknown", "future-skew")


def test_v1_freshness_never_consults_mtime(clock: FakeClock) -> None:
    now = clock.wall_ms()
    # An ancient mtime (a fresh clone) beside a fresh embedded stamp: the stamp decides.
    assert status.read(v1("busy", now), now, mtime_ms=0).presence == "busy"
    assert status.read(v1("busy", now - 20 * MINUTE), now, mtime_ms=now).presence == "unknown"


def test_a_legacy_word_uses_its_mtime(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert status.read(b"busy\n", now, mtime_ms=now - 14 * MINUTE).presence == "busy"
    assert status.read(b"busy", now, mtime_ms=now - 14 * MINUTE).presence == "busy"
    assert status.read(b"busy\n", now, mtime_ms=now - 15 * MINUTE).reason == "stale"
    assert status.read(b"busy\n", now, mtime_ms=now + 2 * MINUTE).reason == "future-skew"
    assert status.read(b"busy\n", now).reason == "no-mtime"


def test_activity_time_is_the_embedded_stamp_clamped_within_skew(clock: FakeClock) -> None:
    now = clock.wall_ms()
    assert status.activity_time_ms(v1("busy", now - 5), now) == now - 5
    assert status.activity_time_ms(v1("busy", now + 5), now) == now
    assert status.activity_time_ms(v1("busy", now + MINUTE + 1), now) is None
    assert status.activity_time_ms(b"busy\n", now, mtime_ms=now - 7) == now - 7
    assert status.activity_time_ms(b"garbage\n", now, mtime_ms=now) is None
    assert status.activity_time_ms(None, now) is None


# --- writer ---------------------------------------------------------------------------------------


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


def record_of(seat: Path) -> bytes:
    return (seat / "status").read_bytes()


def test_write_publishes_version_one_and_refuses_unknown(seat: Path, clock: FakeClock) -> None:
    status.write(seat, "busy", clock)
    assert record_of(seat) == v1("busy", clock.wall_ms())
    with pytest.raises(ValueError):
        status.write(seat, "unknown", clock)
    with pytest.raises(ValueError):
        status.write(seat, "sleeping", clock)
    assert record_of(seat) == v1("busy", clock.wall_ms())


def test_refresh_of_a_missing_record_writes_available(seat: Path, clock: FakeClock) -> None:
    assert status.refresh(seat, clock) is RefreshOutcome.WROTE_DEFAULT
    assert record_of(seat) == v1("available", clock.wall_ms())
    assert status.refresh(seat, clock) is RefreshOutcome.REFRESHED
    assert status.read(record_of(seat), clock.wall_ms()).presence == "available"


def test_refresh_preserves_the_word_and_always_changes_the_bytes(seat: Path, clock: FakeClock) -> None:
    status.write(seat, "busy", clock)
    seen = {record_of(seat)}
    for _ in range(5):  # same millisecond every time: the stamp still moves
        assert status.refresh(seat, clock) is RefreshOutcome.REFRESHED
        assert record_of(seat) not in seen
        seen.add(record_of(seat))
    clock.advance(14 * 60)
    status.refresh(seat, clock)
    clock.advance(14 * 60)
    assert status.read(record_of(seat), clock.wall_ms()).presence == "busy"


def test_version_one_dnd_is_never_refreshed(seat: Path, clock: FakeClock) -> None:
    status.write(seat, "dnd", clock)
    before = record_of(seat)
    clock.advance(10 * 60)
    assert status.refresh(seat, clock) is RefreshOutcome.LEFT_DND
    assert record_of(seat) == before
    clock.advance(5 * 60)
    assert status.read(record_of(seat), clock.wall_ms()).presence == "unknown"


def test_legacy_dnd_upgrades_once_without_renewing_its_hold(seat: Path, clock: FakeClock) -> None:
    (seat / "status").write_bytes(b"dnd\n")
    held_since_ms = clock.wall_ms() - 10 * MINUTE
    os.utime(seat / "status", ns=(held_since_ms * 1_000_000, held_since_ms * 1_000_000))
    assert status.refresh(seat, clock) is RefreshOutcome.UPGRADED_DND
    assert record_of(seat) == v1("dnd", held_since_ms)
    assert status.refresh(seat, clock) is RefreshOutcome.LEFT_DND
    clock.advance(5 * 60)
    assert status.read(record_of(seat), clock.wall_ms()).presence == "unknown"


def test_a_legacy_non_dnd_word_upgrades_with_the_current_time(seat: Path, clock: FakeClock) -> None:
    (seat / "status").write_bytes(b"away\n")
    assert status.refresh(seat, clock) is RefreshOutcome.REFRESHED
    assert record_of(seat) == v1("away", clock.wall_ms())


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [(b"unknown\n", RefreshOutcome.LEFT_UNKNOWN), (b"garbage\n", RefreshOutcome.LEFT_CORRUPT),
     (b"busy\nv1 nope\n", RefreshOutcome.LEFT_CORRUPT)],
)
def test_refresh_leaves_unknown_and_corrupt_records_untouched(seat: Path, clock: FakeClock, raw: bytes,
                                                               outcome: RefreshOutcome) -> None:
    (seat / "status").write_bytes(raw)
    assert status.refresh(seat, clock) is outcome
    assert record_of(seat) == raw


def test_writes_stage_outside_the_seat(seat: Path, clock: FakeClock, catalog: Path) -> None:
    status.write(seat, "busy", clock)
    status.refresh(seat, clock)
    assert sorted(path.name for path in seat.iterdir()) == [".status.lock", "status"]
    assert list((catalog / ".st2" / status.STAGING_NAME).iterdir()) == []
