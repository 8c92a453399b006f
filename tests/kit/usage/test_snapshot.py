"""The usage.txt contract: omit-don't-empty on both sides, the fail-closed readings, the torn
final line, and the atomic owner-only rewrite."""

from __future__ import annotations

import os

import pytest

from st2.records import usage_snapshot
from st2.kit.usage.history import sample_line
from st2.records.usage_snapshot import MISSING_KEYS, NON_NUMERIC, READ, UNREADABLE, Snapshot, read, write

TRIPLE = b"five_hour_used_pct=42\nfive_hour_resets_at=1800003600\nupdated_at=1800000000\n"


def test_the_writer_puts_the_mandatory_triple_first_and_omits_empty_optionals():
    written = Snapshot(
        five_hour_used_pct="12", five_hour_resets_at="1800003600", updated_at="1800000000", tier="max", account=""
    )
    assert written.render() == b"five_hour_used_pct=12\nfive_hour_resets_at=1800003600\nupdated_at=1800000000\ntier=max\n"


def test_the_writer_refuses_an_empty_mandatory_key_and_a_multiline_value():
    with pytest.raises(ValueError):
        Snapshot(five_hour_used_pct="12", five_hour_resets_at="", updated_at="1").render()
    with pytest.raises(ValueError):
        Snapshot(five_hour_used_pct="12", five_hour_resets_at="2", updated_at="1", account="a\nupdated_at=9").render()


def test_a_three_line_snapshot_reads_with_every_optional_absent():
    reading = read(TRIPLE)
    assert reading.outcome == READ
    assert reading.snapshot.five_hour_used_pct == "42"
    assert not reading.snapshot.weekly_armed() and reading.snapshot.account == ""


def test_an_empty_optional_reads_as_absent_and_unknown_keys_pass_through():
    reading = read(TRIPLE + b"seven_day_used_pct=\nseven_day_resets_at=1800500000\nplan=pro\n")
    assert reading.outcome == READ
    assert not reading.snapshot.weekly_present()
    assert reading.snapshot.extra == [("plan", "pro")]


def test_the_weekly_axis_arms_only_with_both_keys_well_formed():
    assert read(TRIPLE + b"seven_day_used_pct=9\nseven_day_resets_at=1800500000\n").snapshot.weekly_armed()
    assert not read(TRIPLE + b"seven_day_used_pct=nine\nseven_day_resets_at=1800500000\n").snapshot.weekly_armed()


def test_the_fail_closed_readings():
    assert read(None).outcome == UNREADABLE
    assert read(b"five_hour_used_pct=42\nupdated_at=1800000000\n").outcome == MISSING_KEYS
    non_numeric = read(b"five_hour_used_pct=4x\nfive_hour_resets_at=1800003600\nupdated_at=1800000000\n")
    assert (non_numeric.outcome, non_numeric.detail) == (NON_NUMERIC, "five_hour_used_pct")
    bad_epoch = read(b"five_hour_used_pct=4\nfive_hour_resets_at=soon\nupdated_at=1800000000\n")
    assert (bad_epoch.outcome, bad_epoch.detail) == (NON_NUMERIC, "five_hour_resets_at")
    for spelled in (b"-1", b"12.", b".5", b"1e2", b" 12"):
        assert read(b"five_hour_used_pct=" + spelled + TRIPLE[21:]).outcome == NON_NUMERIC, spelled


def test_a_torn_final_line_is_not_a_key():
    torn = b"five_hour_resets_at=1800003600\nupdated_at=1800000000\nfive_hour_used_pct=4"
    assert read(torn).outcome == MISSING_KEYS
    assert read(torn + b"2\n").outcome == READ


def test_the_snapshot_is_judged_by_its_bytes_never_its_mtime(tmp_path):
    path = tmp_path / "usage.txt"
    path.write_bytes(TRIPLE)
    os.utime(path, (0, 0))
    assert usage_snapshot.read_file(str(path)).snapshot.updated_at == "1800000000"


def test_write_is_atomic_owner_only_and_leaves_no_temp(tmp_path):
    path = tmp_path / "usage.txt"
    path.write_bytes(b"old\n")
    write(str(path), Snapshot(five_hour_used_pct="1.5", five_hour_resets_at="2", updated_at="1"))
    assert path.read_bytes() == b"five_hour_used_pct=1.5\nfive_hour_resets_at=2\nupdated_at=1\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["usage.txt"]


def test_a_failed_write_leaves_the_old_snapshot(tmp_path):
    path = tmp_path / "usage.txt"
    path.write_bytes(TRIPLE)
    with pytest.raises(ValueError):
        write(str(path), Snapshot(five_hour_used_pct="1", five_hour_resets_at="", updated_at="1"))
    with pytest.raises(OSError):
        write(str(tmp_path / "missing-dir" / "usage.txt"), Snapshot(five_hour_used_pct="1", five_hour_resets_at="2", updated_at="1"))
    assert path.read_bytes() == TRIPLE


def test_the_sample_line_omits_absent_groups_and_keeps_raw_values():
    three = read(TRIPLE).snapshot
    assert sample_line(three, "OK", 0) == "updated_at=1800000000 pct=42 resets_at=1800003600 verdict=OK login_at=0"
    full = read(
        TRIPLE + b"seven_day_used_pct=07.50\nseven_day_resets_at=1800500000\naccount=acct-a\ntier=max\ntokens_in=10\ntokens_out=4\n"
    ).snapshot
    assert sample_line(full, "PAUSE", 1799990000) == (
        "updated_at=1800000000 pct=42 resets_at=1800003600 verdict=PAUSE login_at=1799990000"
        " account=acct-a tier=max pct_7d=07.50 resets_7d=1800500000 tokens_in=10 tokens_out=4"
    )
    half_tokens = read(TRIPLE + b"tokens_in=10\naccount=has space\n").snapshot
    assert sample_line(half_tokens, "OK", 0) == "updated_at=1800000000 pct=42 resets_at=1800003600 verdict=OK login_at=0"


def test_the_status_line_rate_limits_map_onto_the_contract():
    # The `rate_limits` object of Claude Code's documented status-line payload (docs era 2.1.239,
    # captures/claude-code/docs-2.1.239/statusline/statusline-stdin.docs-full-schema.json), verbatim.
    rate_limits = {
        "five_hour": {"used_percentage": 23.5, "resets_at": 1738425600},
        "seven_day": {"used_percentage": 41.2, "resets_at": 1738857600},
    }
    mapped = usage_snapshot.from_rate_limits(rate_limits, 1738420000, account="acct-a", tier="max")
    assert mapped.render() == (
        b"five_hour_used_pct=23.5\nfive_hour_resets_at=1738425600\nupdated_at=1738420000\n"
        b"seven_day_used_pct=41.2\nseven_day_resets_at=1738857600\naccount=acct-a\ntier=max\n"
    )
    without_weekly = usage_snapshot.from_rate_limits({"five_hour": rate_limits["five_hour"], "seven_day": None}, 1)
    assert without_weekly.render() == b"five_hour_used_pct=23.5\nfive_hour_resets_at=1738425600\nupdated_at=1\n"
    assert usage_snapshot.from_rate_limits({}, 1) is None
    assert usage_snapshot.from_rate_limits({"five_hour": {"used_percentage": None, "resets_at": 5}}, 1) is None
    assert usage_snapshot.from_rate_limits(None, 1) is None
