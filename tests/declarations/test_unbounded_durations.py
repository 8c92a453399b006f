"""Durations without a bound, through the real CLI (issue 31): a 400- or 5,000-digit restart
delay, archive-after or notify timeout is one located error from `st2 validate`, and every
command reading the catalog answers without a traceback; `st2 up --interval` past its maximum is
a one-line usage error."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process

HUGE = {"400": "9" * 400 + "s", "5000": "9" * 5000, "11-digit-days": "99999999999d"}
TAIL = "is longer than the maximum, 365d"


def seat(catalog: Path, restart: str = "") -> None:
    directory = catalog / "agents" / "h" / "w"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "w" {{\n    argv "sh" "-c" "sleep 600"\n    {restart}\n}}\n')


# Where each knob's value lands: (file, its text, line:column of the value).
PLACES = {
    "restart-delay": ("agents/h/w/agent.kdl", None, "3:21", "restart-invalid"),
    "archive-after": ("catalog.kdl", 'catalog {{\n    archive-after "{}"\n}}\n', "2:19", "invalid-value"),
    "notify-timeout": ("catalog.kdl", 'catalog {{\n    notify {{\n        on "stale"\n        argv "true"\n'
                                      '        timeout "{}"\n    }}\n}}\n', "5:17", "invalid-value"),
}


def place(catalog: Path, knob: str, value: str) -> str:
    """Write ``value`` as ``knob``; return the located prefix validate must print."""
    source, template, where, code = PLACES[knob]
    if template is None:
        seat(catalog, f'restart {{ delay "{value}" }}')
    else:
        seat(catalog)
        (catalog / source).write_text(template.format(value))
    return f"{source}:{where}: error[{code}]: "


@pytest.fixture
def state():
    """A short state directory (a pty task's socket path must fit in 104 bytes)."""
    directory = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2d-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def env(state: Path, catalog: Path) -> dict[str, str]:
    return st2_env(catalog, XDG_STATE_HOME=str(state))


@pytest.mark.parametrize("knob", list(PLACES))
@pytest.mark.parametrize("size", list(HUGE))
def test_validate_refuses_an_unbounded_duration_at_its_line_and_column(state: Path, catalog: Path, knob, size) -> None:
    located = place(catalog, knob, HUGE[size])
    result = run_st2("validate", "--host", "h", env=env(state, catalog))
    assert "Traceback" not in result.stderr and result.returncode == 1, result
    [line] = [line for line in result.stdout.splitlines() if line.startswith(located)]
    assert line.endswith(TAIL) and len(line) < 200, line


@pytest.mark.parametrize("argv", [["agents"], ["doctor"], ["tasks"], ["up", "--once"], ["top", "--once"],
                                  ["catalog", "graph", "--json"]])
def test_every_command_reading_unbounded_durations_answers_without_a_traceback(state: Path, catalog: Path, argv) -> None:
    seat(catalog, f'restart {{ delay "{HUGE["400"]}"; interval "{HUGE["5000"]}" }}')
    (catalog / "catalog.kdl").write_text(f'catalog {{\n    archive-after "{HUGE["5000"]}"\n'
                                         f'    notify {{ on "stale"; argv "true"; timeout "{HUGE["11-digit-days"]}"; }}\n}}\n')
    result = run_st2(*argv, "--host", "h", env=env(state, catalog))
    output = result.stdout + result.stderr
    assert "Traceback" not in output and "OverflowError" not in output and "ValueError" not in output, output[-2000:]
    assert "agents/h/w/agent.kdl:3:" in output, output[-2000:]  # the seat's own problem is named


def test_a_valid_duration_at_the_bound_validates(state: Path, catalog: Path) -> None:
    seat(catalog, 'restart { delay "365d"; interval "8760h" }')
    (catalog / "catalog.kdl").write_text('catalog {\n    archive-after "365d"\n'
                                         '    notify { on "stale"; argv "true"; timeout "31536000000ms"; }\n}\n')
    result = run_st2("validate", "--host", "h", env=env(state, catalog))
    assert result.returncode == 0, result


@pytest.mark.parametrize("interval", ["25h", "9" * 5000], ids=["25h", "5000-digits"])
def test_up_refuses_an_interval_past_a_day_in_one_line(state: Path, catalog: Path, interval) -> None:
    result = run_st2("up", "--once", "--interval", interval, "--host", "h", env=env(state, catalog))
    assert result.returncode == 2 and "Traceback" not in result.stderr, result
    assert "is longer than the maximum, 1d" in result.stderr
