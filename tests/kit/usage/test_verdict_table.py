"""The usage-verdict decision table (tests/kit/usage/cases.tsv), hermetic per case.

* The subject is reached in process: the same ``verdict(args)`` the budget guard calls.
* One clock reading for the whole run (a FakeClock's), every timestamp computed against it, so
  the at-or-over boundary rows cannot flake on cross-case skew.
* Each case strips the whole ``DELEGATION_KIT_*`` namespace derived from the running process's
  own environment, after a poison (``DELEGATION_KIT_PAUSE_PCT=0``, which pauses every row) has
  been re-armed in it. The case's own knobs are applied first and the kit defaults seeded only
  where unset, so a poison the strip missed survives and reddens the table. A negative control
  skips the strip once and watches the poison PAUSE.
* The account config and the knob file always name sandbox fixtures, so the host's identity
  and configuration cannot reshape the rows.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.kit.usage.verdict import verdict

HERE = Path(__file__).resolve().parent
NOW = FakeClock().wall_ms() // 1000  # the run's one clock reading
POISON = ("DELEGATION_KIT_PAUSE_PCT", "0")
# The kit defaults, as this test's own literals (never read from the library under test).
KIT_DEFAULTS = {
    "DELEGATION_KIT_PAUSE_PCT": "80",
    "DELEGATION_KIT_PAUSE_PCT_7D": "95",
    "DELEGATION_KIT_STALE_AGE": "600",
    "DELEGATION_KIT_LOGIN_WINDOW": "600",
    "DELEGATION_KIT_LOGIN_SETTLE": "90",
    "DELEGATION_KIT_REFRESH_MIN_AGE": "60",
    "DELEGATION_KIT_FAN_WIDTH": "2",
}
COLUMNS = "verdict exit pct age_off reset_off cred_age pct_7d reset7d_off account live append axis desc".split()


def load_cases() -> list[dict[str, str]]:
    cases = []
    for line in (HERE / "cases.tsv").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.split("\t")
        assert len(cells) == len(COLUMNS), f"malformed row: {line!r}"
        cases.append(dict(zip(COLUMNS, cells)))
    return cases


CASES = load_cases()


def grep_count(path: Path) -> int:
    """Lines as ``grep -c ''`` counts them: a final unterminated line counts too."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def strip_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in os.environ if name.startswith("DELEGATION_KIT_")]:
        monkeypatch.delenv(name)


def materialize(case: dict[str, str], sandbox: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, Path]:
    """Write the case's snapshot, credentials and account config; set its own knobs."""
    lines = []
    if case["pct"] != "MISSING":
        lines.append(f"five_hour_used_pct={case['pct']}")
    lines.append(f"five_hour_resets_at={NOW + int(case['reset_off'])}")
    lines.append(f"updated_at={NOW - int(case['age_off'])}")
    if case["pct_7d"] != "-":
        lines.append(f"seven_day_used_pct={case['pct_7d']}")
    if case["reset7d_off"] != "-":
        lines.append(f"seven_day_resets_at={NOW + int(case['reset7d_off'])}")
    if case["account"] != "-":
        lines.append(f"account={case['account']}")
    usage_file = sandbox / "usage.txt"
    usage_file.write_text("\n".join(lines) + "\n")
    credentials = sandbox / ".credentials.json"
    if case["cred_age"] != "-":
        credentials.write_text('{"claudeAiOauth": {"accessToken": "unused"}}')
        stamp = NOW - int(case["cred_age"])
        os.utime(credentials, (stamp, stamp))
    account_config = sandbox / "claude.json"
    account_config.write_text(
        json.dumps({"oauthAccount": {"accountUuid": case["live"]}}) if case["live"] != "-" else "{}"
    )
    knob_file = sandbox / "delegation-config.knobs"
    knob_file.write_text("# this case sets no knob in its file\n")
    history = sandbox / "history.log"
    monkeypatch.setenv("HOME", str(sandbox))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(sandbox / "config"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("DELEGATION_KIT_KNOB_FILE", str(knob_file))
    monkeypatch.setenv("DELEGATION_KIT_ACCOUNT_CONFIG", str(account_config))
    monkeypatch.setenv("DELEGATION_KIT_USAGE_HISTORY", str(history))
    for name, value in KIT_DEFAULTS.items():
        if name not in os.environ:  # seeded only where unset: a surviving poison wins
            monkeypatch.setenv(name, value)
    return usage_file, credentials, history


def run_case(case, sandbox, monkeypatch, strip=True) -> tuple[str, int, Path]:
    monkeypatch.setenv(*POISON)  # re-armed before every case
    if strip:
        strip_namespace(monkeypatch)
    usage_file, credentials, history = materialize(case, sandbox, monkeypatch)
    line, status = verdict([str(usage_file), str(credentials)], now=NOW, stderr=io.StringIO())
    return line, status, history


@pytest.mark.parametrize("case", CASES, ids=[case["desc"] for case in CASES])
def test_decision_table(case, tmp_path, monkeypatch):
    line, status, history = run_case(case, tmp_path, monkeypatch)
    assert status == int(case["exit"]), line
    assert f" -> {case['verdict']} " in line or line.endswith(f" -> {case['verdict']}"), line
    assert "width=2 " in line, line
    assert line.index("width=2 ") + len("width=2 ") == line.index("-> "), "width must sit right before the arrow"
    if case["axis"] == "5h":
        assert "-> PAUSE (5h window)" in line, line
    elif case["axis"] == "7d":
        assert "-> PAUSE (7-day window)" in line, line
    else:
        assert "PAUSE (" not in line, line
    assert ("account switch" in line) == ("account switch" in case["desc"]), line
    assert grep_count(history) == int(case["append"])
    if int(case["append"]):
        sample = history.read_text()
        weekly = case["pct_7d"] != "-" and case["reset7d_off"] != "-"
        assert ("pct_7d=" in sample) == weekly, sample
        assert f"verdict={case['verdict']} " in sample, sample


def test_table_covers_every_verdict_and_both_axes():
    verdicts = {case["verdict"] for case in CASES}
    assert verdicts == {"OK", "PAUSE", "STALE", "RESET-OK"}
    assert {case["axis"] for case in CASES if case["verdict"] == "PAUSE"} == {"5h", "7d"}
    assert {case["append"] for case in CASES} == {"0", "1"}


def test_negative_control_a_surviving_poison_pauses(tmp_path, monkeypatch):
    """Skipping the strip once lets the poison through: an under-threshold row PAUSEs. This is
    what makes the strip in every other case load-bearing."""
    ok_row = next(case for case in CASES if case["desc"] == "integer under threshold, no credentials file")
    line, status, _ = run_case(ok_row, tmp_path, monkeypatch, strip=False)
    assert status == 1 and "-> PAUSE (5h window)" in line, line


def test_width_tracks_the_fan_width_knob(tmp_path, monkeypatch):
    ok_row = next(case for case in CASES if case["desc"] == "integer under threshold, no credentials file")
    monkeypatch.setenv(*POISON)
    strip_namespace(monkeypatch)
    monkeypatch.setenv("DELEGATION_KIT_FAN_WIDTH", "20")
    usage_file, credentials, _ = materialize(ok_row, tmp_path, monkeypatch)
    line, status = verdict([str(usage_file), str(credentials)], now=NOW, stderr=io.StringIO())
    assert status == 0
    assert "width=20 -> OK" in line and "width=2 " not in line, line


def test_unreadable_snapshot_still_carries_width(tmp_path, monkeypatch):
    ok_row = next(case for case in CASES if case["desc"] == "integer under threshold, no credentials file")
    monkeypatch.setenv(*POISON)
    strip_namespace(monkeypatch)
    materialize(ok_row, tmp_path, monkeypatch)
    missing = tmp_path / "absent.txt"
    line, status = verdict([str(missing)], now=NOW, stderr=io.StringIO())
    assert (line, status) == (
        f"usage-verdict: cannot read {missing} width=2 -> STALE"
        " (never blocks delegation — re-read or refresh before trusting the number)",
        2,
    )
    assert not (tmp_path / "history.log").exists(), "an unreadable snapshot is not a sample"
