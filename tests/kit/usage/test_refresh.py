"""The demand-driven refresh seam (DELEGATION_KIT_REFRESH_CMD), through a stub command.

The stub is `python -c CODE …` (an argv, no shell); it counts its invocations in a marker file
and, when told to, rewrites the snapshot as a poll would. Armed and short-circuit are the firing
and non-firing pair over the same stub, so the short-circuit's silence proves the floor rather
than a broken stub.
"""

from __future__ import annotations

import sys

import pytest

STUB = """
import sys
marker, mode, usage_file, now, pct, account = sys.argv[1:7]
with open(marker, "a") as handle:
    handle.write("ran\\n")
if mode == "fail":
    print("REFRESH-DIAGNOSTIC on stdout")
    print("REFRESH-DIAGNOSTIC on stderr", file=sys.stderr)
    sys.exit(3)
lines = [f"five_hour_used_pct={pct}", f"five_hour_resets_at={int(now) + 3600}", f"updated_at={now}"]
if account != "-":
    lines.append(f"account={account}")
open(usage_file, "w").write("\\n".join(lines) + "\\n")
"""


def arm_stub(usage, mode: str, pct: str = "12", account: str = "-") -> None:
    """Write the stub's script (read by the interpreter, never executed itself) and point the
    refresh knob at it: one ``NAME[] = element`` line per argv word, as the knob grammar asks."""
    script = usage.root / "stub.py"
    script.write_text(STUB)
    argv = [sys.executable, str(script), str(usage.root / "marker"), mode, str(usage.usage_file), str(usage.now), pct, account]
    usage.knobs(*(f"DELEGATION_KIT_REFRESH_CMD[] = {word}" for word in argv))


def invocations(usage) -> int:
    marker = usage.root / "marker"
    return marker.read_text().count("ran\n") if marker.exists() else 0


@pytest.mark.process
def test_armed_a_stale_snapshot_runs_the_command_and_reads_its_values(usage):
    usage.snapshot(pct="70", age=700)
    arm_stub(usage, "write", pct="12")
    line, status = usage.verdict()
    assert invocations(usage) == 1
    assert status == 0 and "used=12% age=0s" in line and "-> OK" in line, line


def test_short_circuit_a_snapshot_under_the_floor_never_runs_the_command(usage):
    usage.snapshot(pct="70", age=59)
    arm_stub(usage, "write", pct="12")
    line, status = usage.verdict()
    assert invocations(usage) == 0
    assert status == 0 and "used=70% age=59s" in line, line


@pytest.mark.process
def test_the_floor_is_inclusive_at_its_age(usage):
    usage.snapshot(pct="70", age=60)
    arm_stub(usage, "write", pct="12")
    usage.verdict()
    assert invocations(usage) == 1


@pytest.mark.process
def test_a_missing_snapshot_runs_the_command(usage):
    arm_stub(usage, "write", pct="12")
    line, status = usage.verdict()
    assert invocations(usage) == 1 and status == 0 and "used=12%" in line, line


@pytest.mark.process
def test_fail_soft_leaves_the_snapshot_byte_identical_and_judges_the_cache(usage):
    before = usage.snapshot(pct="40", age=700)
    arm_stub(usage, "fail")
    line, status = usage.verdict()
    assert invocations(usage) == 1
    assert usage.usage_file.read_bytes() == before
    assert status == 2 and "-> STALE (reading older than 600s" in line, line
    assert "REFRESH-DIAGNOSTIC" not in line


@pytest.mark.process
def test_fail_soft_no_refresh_diagnostic_reaches_the_merged_stream(usage_process):
    usage = usage_process
    before = usage.snapshot(pct="40", age=7000)
    arm_stub(usage, "fail")
    result = usage.run_merged("usage", "verdict")
    assert invocations(usage) == 1
    assert usage.usage_file.read_bytes() == before
    assert result.returncode == 2
    assert "REFRESH-DIAGNOSTIC" not in result.stdout
    assert result.stdout.count("\n") == 1 and "-> STALE (reading older than 600s" in result.stdout, result.stdout


@pytest.mark.process
def test_account_switch_forces_the_refresh_past_the_floor(usage):
    usage.live("acct-new")
    usage.snapshot(pct="70", age=5, account="acct-old")
    arm_stub(usage, "write", pct="33", account="acct-new")
    line, status = usage.verdict()
    assert invocations(usage) == 1
    assert status == 0 and "used=33%" in line and "-> OK" in line, line


@pytest.mark.process
def test_account_switch_with_a_failing_refresh_stays_the_account_switch_stale(usage):
    usage.live("acct-new")
    before = usage.snapshot(pct="70", age=5, account="acct-old")
    arm_stub(usage, "fail")
    line, status = usage.verdict()
    assert invocations(usage) == 1
    assert usage.usage_file.read_bytes() == before
    assert status == 2 and "-> STALE (snapshot predates an account switch;" in line, line


def test_matched_account_under_the_floor_is_not_refreshed(usage):
    usage.live("acct-a")
    usage.snapshot(pct="70", age=5, account="acct-a")
    arm_stub(usage, "write", pct="33", account="acct-a")
    usage.verdict()
    assert invocations(usage) == 0


@pytest.mark.process
def test_an_unspawnable_refresh_command_is_fail_soft(usage):
    usage.snapshot(pct="40", age=700)
    usage.knobs(f"DELEGATION_KIT_REFRESH_CMD[] = {usage.root / 'no-such-program'}")
    line, status = usage.verdict()
    assert status == 2 and "-> STALE (reading older than 600s" in line, line


def test_the_refresh_command_takes_no_environment_override(usage, monkeypatch):
    usage.snapshot(pct="40", age=700)
    monkeypatch.setenv("DELEGATION_KIT_REFRESH_CMD", f"{sys.executable} -c open({str(usage.root / 'marker')!r},'a').write('ran\\n')")
    usage.verdict()
    assert invocations(usage) == 0
