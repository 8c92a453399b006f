"""The usage-trend assertion set over a static fixture history (tests/kit/usage/trend-history.log),
under the same hermetic sandbox as the verdict (the DELEGATION_KIT_* namespace stripped and the
kit defaults reseeded, so the history knob reads empty). Needles are exact golden strings and
segment counts are anchored on the reporter's own two-space ``[5h]``/``[7d]`` prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.kit.usage.trend import TrendRefusal, report, trend

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "trend-history.log"


def segment_lines(text: str, axis: str | None = None) -> list[str]:
    prefixes = ("  [5h]", "  [7d]") if axis is None else (f"  [{axis}]",)
    return [line for line in text.splitlines() if line.startswith(prefixes)]


@pytest.fixture
def fixture_report(usage) -> str:
    return trend([str(FIXTURE)])


def test_whole_report_matches_the_golden(fixture_report):
    assert fixture_report == (HERE / "trend-report.golden.txt").read_text()


def test_segments_split_at_a_reset_boundary(fixture_report):
    alpha_5h = [line for line in segment_lines(fixture_report, "5h") if "tier=pro" in line]
    assert [line.split(":")[0] for line in alpha_5h] == [
        "  [5h] reset@30000 login@1000 tier=pro",
        "  [5h] reset@48000 login@1000 tier=pro",
        "  [5h] reset@66000 login@1000 tier=pro",
    ]


def test_segments_split_at_a_login_change(fixture_report):
    beta_5h = [line for line in segment_lines(fixture_report, "5h") if "tier=max" in line]
    assert beta_5h == [
        "  [5h] reset@60000 login@39000 tier=max: 20.0%->20.0% over 0.00h, rate n/a (fewer than two trusted readings), 1 sample(s), 0 suspect",
        "  [5h] reset@60000 login@39500 tier=max: 35.0%->35.0% over 0.00h, rate n/a (fewer than two trusted readings), 1 sample(s), 0 suspect",
    ]


def test_segments_split_at_an_account_change_and_group_under_headings(fixture_report):
    lines = fixture_report.splitlines()
    assert [line for line in lines if line.startswith(("account ", "account:"))] == [
        "account: (unstamped)",
        "account acct-alpha",
        "account acct-beta",
    ]
    assert len(segment_lines(fixture_report)) == 9
    assert fixture_report.splitlines()[0] == "usage-trend: 21 axis-record(s) in 9 segment(s)"


def test_per_account_grouping_reunites_the_weekly_trajectory_across_a_switch_back(fixture_report):
    assert segment_lines(fixture_report, "7d")[0] == (
        "  [7d] reset@700000 login@1000 tier=pro: 20.0%->44.0% over 13.33h, +1.80%/h, 8 sample(s), 0 suspect"
    )


def test_spike_then_correction_is_flagged_and_excluded_from_the_rate(fixture_report):
    # 10, 22, 85 (spike), 30 (correction): both sides suspect; the rate is 10 -> 22 over 1 h,
    # not an average through the spike, and the segment ending in the correction keeps 30.
    assert segment_lines(fixture_report, "5h")[1] == (
        "  [5h] reset@30000 login@1000 tier=pro: 10.0%->30.0% over 3.00h, +12.00%/h, 4 sample(s), 2 suspect"
    )


def test_token_deltas_and_weekly_headroom(fixture_report):
    lines = fixture_report.splitlines()
    assert "      tokens: +900 in / +160 out over the segment" in lines
    assert "      tokens: +1900 in / +340 out over the segment" in lines
    assert "      weekly headroom: 51.0% to the 95% ceiling (~28.3h at current rate)" in lines
    assert "      weekly headroom: 85.0% to the 95% ceiling (no depletion trend at current rate)" in lines


def test_headroom_reads_the_ceiling_knob(usage, monkeypatch):
    monkeypatch.setenv("DELEGATION_KIT_PAUSE_PCT_7D", "90")
    text = trend([str(FIXTURE)])
    assert "      weekly headroom: 46.0% to the 90% ceiling (~25.6h at current rate)" in text.splitlines()


def test_combine_block_golden_over_two_accounts(fixture_report):
    assert fixture_report.endswith(
        "weekly position per account (advisory; accounts are never summed):\n"
        "  account acct-alpha: last 44.0%, headroom 51.0% to the 95% ceiling\n"
        "  account acct-beta: last 12.0%, headroom 83.0% to the 95% ceiling\n"
        "accounts: 2, at or over the weekly ceiling: 0\n"
    )


def test_combine_block_counts_at_or_over_and_dashes_an_account_without_weekly(usage, tmp_path):
    log = tmp_path / "h.log"
    log.write_text(
        "updated_at=1 pct=5 resets_at=9 verdict=OK login_at=0 account=a pct_7d=95 resets_7d=99\n"
        "updated_at=1 pct=5 resets_at=9 verdict=OK login_at=0 account=b pct_7d=94.9 resets_7d=99\n"
        "updated_at=1 pct=5 resets_at=9 verdict=OK login_at=0 account=c\n"
    )
    assert trend([str(log)]).endswith(
        "  account a: last 95.0%, headroom 0.0% to the 95% ceiling\n"
        "  account b: last 94.9%, headroom 0.1% to the 95% ceiling\n"
        "  account c: last -, headroom -\n"
        "accounts: 3, at or over the weekly ceiling: 1\n"
    )


def test_no_combine_block_for_a_one_account_log(usage, tmp_path):
    log = tmp_path / "h.log"
    log.write_text(
        "updated_at=1 pct=5 resets_at=9 verdict=OK login_at=0 account=a pct_7d=50 resets_7d=99\n"
        "updated_at=2 pct=6 resets_at=9 verdict=OK login_at=0 pct_7d=51 resets_7d=99\n"
    )
    text = trend([str(log)])
    assert "accounts:" not in text and "weekly position" not in text
    assert len(segment_lines(text)) == 4


def test_unset_knob_is_refused(usage):
    with pytest.raises(TrendRefusal) as refusal:
        trend([])
    assert str(refusal.value) == (
        "usage-trend: DELEGATION_KIT_USAGE_HISTORY unset — no history to report (enable sampling first)"
    )


def test_missing_history_is_refused(usage):
    missing = usage.root / "absent.log"
    with pytest.raises(TrendRefusal) as refusal:
        trend([str(missing)])
    assert str(refusal.value) == f"usage-trend: cannot read history {missing}"


def test_the_knob_is_read_when_no_positional_rides(usage, monkeypatch):
    monkeypatch.setenv("DELEGATION_KIT_USAGE_HISTORY", str(FIXTURE))
    assert trend([]) == trend([str(FIXTURE)])


def test_zero_segments_is_a_document_not_a_refusal(usage, tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("# nothing sampled yet\n")
    assert trend([str(log)]) == f"usage-trend: no parseable samples in {log} (0 segments)\n"


def test_a_full_key_tie_sorts_by_the_whole_record_not_input_order():
    one = "updated_at=100 pct=30 resets_at=900 verdict=OK login_at=0 tokens_in=1 tokens_out=1\n"
    two = "updated_at=100 pct=20 resets_at=900 verdict=OK login_at=0 tokens_in=5 tokens_out=5\n"
    assert report(one + two, "95", "x") == report(two + one, "95", "x")
    # "…\t20\t…" sorts before "…\t30\t…" bytewise, so the pct-20 sample is the first endpoint.
    assert "      tokens: -4 in / -4 out over the segment" in report(one + two, "95", "x")


def test_two_spellings_of_one_epoch_stay_two_segments():
    text = (
        "updated_at=1 pct=5 resets_at=900 verdict=OK login_at=0\n"
        "updated_at=2 pct=6 resets_at=0900 verdict=OK login_at=0\n"
    )
    assert len(segment_lines(report(text, "95", "x"))) == 2


@pytest.mark.process
def test_cli_exit_codes_and_the_dash_escape(usage):
    dashed = usage.root / "-history.log"
    dashed.write_text(FIXTURE.read_text())
    unset = usage.run("usage", "trend")
    assert (unset.returncode, unset.stdout) == (2, "")
    assert "DELEGATION_KIT_USAGE_HISTORY unset" in unset.stderr
    refused = usage.run("usage", "trend", "--bogus")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("usage-trend: unrecognized option: --bogus\nusage: st2 usage trend [--] [history-file]")
    helped = usage.run("usage", "trend", "--help")
    assert (helped.returncode, helped.stderr) == (0, "")
    assert helped.stdout.startswith("`st2 usage trend [--] [history-file]`")
    escaped = subprocess_in(usage, ["usage", "trend", "--", "-history.log", "ignored-second"])
    assert escaped.returncode == 0
    assert escaped.stdout == (HERE / "trend-report.golden.txt").read_text()


def subprocess_in(usage, words):
    import os
    import subprocess
    import sys

    from support import REPO

    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "st2", *words], capture_output=True, text=True, env=env, cwd=usage.root, timeout=60)
