"""`st2 hook budget-guard`: PAUSE blocks (exit 2, the line plus its corrective on stderr); every
other verdict advises (exit 0, the line as additionalContext in the hook JSON)."""

from __future__ import annotations

import json

import pytest

from st2.drivers.claude.hooks.budget_guard import CORRECTIVE, decide

LINE = "usage-verdict: used=40% age=0s resets_in=3600s width=2 -> OK (x)"


def test_pause_blocks_with_the_line_and_its_corrective():
    assert decide(LINE, 1) == (2, "", f"{LINE}\n{CORRECTIVE}\n")


@pytest.mark.parametrize("status", [0, 2])
def test_every_other_verdict_advises_with_the_line_verbatim(status):
    assert decide(LINE, status) == (
        0,
        '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": '
        '"budget verdict (budget-guard): usage-verdict: used=40% age=0s resets_in=3600s width=2 -> OK (x)"}}\n',
        "",
    )


def test_the_corrective_names_both_knobs_and_both_axes():
    for needle in ("DELEGATION_KIT_PAUSE_PCT ", "DELEGATION_KIT_PAUSE_PCT_7D", "5h PAUSE", "7-day PAUSE"):
        assert needle in CORRECTIVE


@pytest.mark.process
def test_a_pause_snapshot_blocks_the_dispatch(usage_process):
    usage = usage_process
    usage.snapshot(pct="85")
    result = usage.run("hook", "budget-guard")
    assert result.returncode == 2
    assert result.stdout == ""
    line, corrective = result.stderr.rstrip("\n").split("\n")
    assert "-> PAUSE (5h window): at or over 80% of the live 5h window" in line and "width=2 " in line
    assert corrective == CORRECTIVE


@pytest.mark.process
def test_an_ok_snapshot_advises(usage_process):
    usage = usage_process
    usage.snapshot(pct="40")
    result = usage.run("hook", "budget-guard")
    assert (result.returncode, result.stderr) == (0, "")
    context = json.loads(result.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "PreToolUse"
    assert context["additionalContext"].startswith("budget verdict (budget-guard): usage-verdict: used=40% age=")
    assert context["additionalContext"].endswith("width=2 -> OK (fresh reading under its pause thresholds; headroom now — a floor, not a recommendation)")


@pytest.mark.process
def test_no_snapshot_producer_advises_stale_and_never_blocks(usage_process):
    usage = usage_process
    result = usage.run("hook", "budget-guard", input="")
    assert (result.returncode, result.stderr) == (0, "")
    assert json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"] == (
        f"budget verdict (budget-guard): usage-verdict: cannot read {usage.usage_file} width=2"
        " -> STALE (never blocks delegation — re-read or refresh before trusting the number)"
    )


@pytest.mark.process
def test_a_raised_threshold_in_the_environment_reaches_the_next_fire(usage_process, monkeypatch):
    usage = usage_process
    usage.snapshot(pct="85")
    assert usage.run("hook", "budget-guard").returncode == 2
    monkeypatch.setenv("DELEGATION_KIT_PAUSE_PCT", "90")
    assert usage.run("hook", "budget-guard").returncode == 0
