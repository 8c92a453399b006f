"""A usage snapshot that cannot be trusted reads STALE, never a definite verdict: a duplicated
interpreted key (the last one would otherwise win and turn a PAUSE into OK) and an
``updated_at`` past the clock's future-skew bound (a producer writing milliseconds would read
fresh for ever). Neither appends a sample; the same bytes without the flaw judge normally."""

from __future__ import annotations

import pytest

from st2.records import usage_snapshot


def write(usage, *lines: str) -> None:
    usage.usage_file.write_text("".join(line + "\n" for line in lines))


def test_a_duplicated_key_reads_stale_not_the_last_value(usage):
    usage.sampling()
    write(usage, "five_hour_used_pct=99", f"five_hour_resets_at={usage.now + 3600}",
          f"updated_at={usage.now}", "five_hour_used_pct=1")
    line, status = usage.verdict()
    assert status == 2 and line.startswith(f"usage-verdict: duplicate key five_hour_used_pct in {usage.usage_file}")
    assert "-> STALE" in line
    assert not usage.history.exists()


def test_the_same_snapshot_without_the_duplicate_pauses(usage):
    write(usage, "five_hour_used_pct=99", f"five_hour_resets_at={usage.now + 3600}", f"updated_at={usage.now}")
    line, status = usage.verdict()
    assert status == 1 and "-> PAUSE" in line


def test_a_duplicated_uninterpreted_key_is_left_alone(usage):
    write(usage, "five_hour_used_pct=10", f"five_hour_resets_at={usage.now + 3600}", f"updated_at={usage.now}",
          "producer=a", "producer=b")
    assert usage.verdict()[1] == 0


@pytest.mark.parametrize("ahead", [61, 3600, 1_000_000_000_000])
def test_an_updated_at_in_the_future_reads_stale(usage, ahead):
    usage.sampling()
    write(usage, "five_hour_used_pct=10", f"five_hour_resets_at={usage.now + 3600}", f"updated_at={usage.now + ahead}")
    line, status = usage.verdict()
    assert status == 2 and f"is {ahead}s in the future" in line and "STALE" in line
    assert not usage.history.exists()


@pytest.mark.parametrize("ahead", [0, 30, 60])
def test_an_updated_at_within_the_skew_bound_is_fresh(usage, ahead):
    write(usage, "five_hour_used_pct=10", f"five_hour_resets_at={usage.now + 3600}", f"updated_at={usage.now + ahead}")
    assert usage.verdict()[1] == 0


def test_the_reader_names_the_first_duplicate():
    reading = usage_snapshot.read(b"updated_at=1\nfive_hour_used_pct=1\nupdated_at=2\nfive_hour_used_pct=3\n")
    assert (reading.outcome, reading.detail) == (usage_snapshot.DUPLICATE_KEY, "updated_at")


@pytest.mark.process
def test_the_budget_guard_never_turns_a_duplicated_pause_into_ok(usage_process):
    usage = usage_process
    write(usage, "five_hour_used_pct=99", f"five_hour_resets_at={usage.now + 3600}",
          f"updated_at={usage.now}", "five_hour_used_pct=1")
    result = usage.run("hook", "budget-guard")
    assert result.returncode == 0 and "duplicate key five_hour_used_pct" in result.stdout and "-> OK" not in result.stdout
