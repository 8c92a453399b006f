"""checks/units-verify passes on the shipped units and fails on each kind of broken unit.

systemd-analyze exits 0 on an unknown key or a bad value, so these mutations prove the check
reads stderr rather than trusting the exit status.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "checks" / "units-verify"


def run_check(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *arguments], capture_output=True, text=True, timeout=120)


def mutated_units(tmp_path: Path, name: str, old: str, new: str) -> Path:
    directory = tmp_path / "units"
    shutil.copytree(REPO / "units", directory)
    text = (directory / name).read_text()
    assert old in text, f"{old!r} not in {name}: the mutation would prove nothing"
    (directory / name).write_text(text.replace(old, new, 1))
    return directory


def test_the_shipped_units_verify_clean() -> None:
    result = run_check()
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout.startswith("units-verify: 5 units verified clean: st2-ding@.service, ")


@pytest.mark.parametrize(
    ("name", "old", "new", "finding"),
    [
        ("st2.service", "\nKillMode=process\n", "\nKillMode=process\nKillModes=process\n", "Unknown key 'KillModes'"),
        ("st2.service", "Type=notify", "Type=notified", "Failed to parse service type"),
        ("st2.service", "\nWatchdogSec=60s\n", "\nWatchdogSec=a-minute\n", "Failed to parse sec value, ignoring: a-minute"),
        ("st2-usage-poll.timer", "\nPersistent=true\n", "\nPersistent=maybe\n", "Failed to parse boolean value, ignoring: maybe"),
        ("st2-usage-poll.timer", "OnCalendar=@pollInterval@", "OnCalendar=whenever", "Failed to parse calendar specification"),
        ("st2-ding@.service", "ExecStart=@st2@", "ExecStart=/nonexistent/st2", "is not executable"),
        ("st2-usage-poll.timer", "Unit=st2-usage-poll.service", "Unit=st2-usage-pol.service", "not a shipped unit"),
    ],
)
def test_a_broken_unit_fails_the_check(tmp_path: Path, name: str, old: str, new: str, finding: str) -> None:
    result = run_check("--units-dir", str(mutated_units(tmp_path, name, old, new)))
    assert result.returncode == 1
    assert finding in result.stderr
    assert result.stdout == ""


def test_warnings_alone_fail_the_check_although_systemd_analyze_exits_zero(tmp_path: Path) -> None:
    directory = mutated_units(tmp_path, "st2.service", "\nKillMode=process\n", "\nKillMode=process\nKillModes=process\n")
    # The same broken unit that the check refuses: systemd-analyze itself reports success.
    result = run_check("--units-dir", str(directory))
    assert result.returncode == 1
    assert "ignoring" in result.stderr
