"""The poll timer's systemd user units: a oneshot `st2 usage poll` every 5 minutes, persistent,
with a randomized delay; checked by `systemd-analyze verify` where it is installed. The units are
templates (the st2 path and the poll interval are rendered in by `st2 service install`), so the
checks run over the rendered text with the default settings."""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from st2.service.units import UnitSettings, render_all

ST2 = str(Path(sys.executable).with_name("st2"))
NAMES = ("st2-usage-poll.service", "st2-usage-poll.timer")


def rendered() -> dict[str, str]:
    units = render_all(UnitSettings(st2=ST2))
    return {name: units[name] for name in NAMES}


def unit(name: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False)
    parser.optionxform = str
    parser.read_string(rendered()[name])
    return parser


def write_rendered(directory: Path) -> None:
    for name, text in rendered().items():
        (directory / name).write_text(text)


def test_the_service_is_a_oneshot_usage_poll():
    service = unit("st2-usage-poll.service")
    assert service["Service"]["Type"] == "oneshot"
    assert service["Service"]["ExecStart"] == f"{ST2} usage poll"


def test_the_timer_fires_every_five_minutes_persistently_with_a_randomized_delay():
    timer = unit("st2-usage-poll.timer")["Timer"]
    assert timer["OnCalendar"] == "*:0/5"
    assert timer["Persistent"] == "true"
    assert timer["RandomizedDelaySec"] == "30s"
    assert timer["Unit"] == "st2-usage-poll.service"
    assert unit("st2-usage-poll.timer")["Install"]["WantedBy"] == "timers.target"


@pytest.mark.process
@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_verifies_both_units(tmp_path):
    write_rendered(tmp_path)
    result = subprocess.run(
        ["systemd-analyze", "verify", *NAMES], cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


@pytest.mark.process
@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_analyze_rejects_a_broken_timer(tmp_path):
    """The non-firing case: verify does catch a malformed unit, so the check above means something."""
    write_rendered(tmp_path)
    broken = tmp_path / "st2-usage-poll.timer"
    broken.write_text(broken.read_text().replace("OnCalendar=*:0/5", "OnCalendar=every-now-and-then"))
    result = subprocess.run(
        ["systemd-analyze", "verify", "st2-usage-poll.timer"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode != 0 or result.stderr != ""
