"""`st2 top --once` (and `st2 top` whenever stdout is not a terminal) prints one plain frame of
the fixed catalog and exits, through the real CLI, without importing Textual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import top_fixture
from support import REPO, run_st2, st2_env

pytestmark = pytest.mark.process

FRAME = """\
5h [########------------]   42%   7d [#############-------]   63%   verdict OK
history ▁▁▁▁▁▁▂▂▂▂▂▂▂▂▂▂▃▃▃▃▃▃▃▃▃▃▄▄▄▄
5 of 5 seats; 1 blocked on a human
  HOST   AGENT     PRESENCE   DESIRED  OBSERVED                  CONTEXT           INBOX  OLDEST  TASKS
! alpha  reviewer  available  running  obs:active+blocked:human  ctx:12%           0      -       agent:absent
  alpha  builder   busy       running  obs:active                ctx:71% ⟳2        2      5m ago  agent:absent
  alpha  flaky     offline    running  obs:ended                 ctx:-             0      -       agent:absent
  alpha  sleeper   unknown    running  obs:unknown(stale)        ctx:96% ⟳5 stale  0      -       agent:absent
  beta   remote    offline    running  obs:-                     ctx:-             0      -       -
recent events: none journaled on alpha (st2 up writes them; st2 events --follow streams them)
"""


def environment(tmp_path: Path, sampling: bool = True) -> dict[str, str]:
    catalog = top_fixture.build(tmp_path)
    return st2_env(catalog, ST2_CLOCK_WALL_MS=str(top_fixture.NOW_MS), XDG_STATE_HOME=str(tmp_path / "state"),
                   **top_fixture.usage_environment(tmp_path, sampling))


def test_once_prints_one_plain_frame_blocked_on_a_human_first(tmp_path: Path) -> None:
    completed = run_st2("top", "--once", "--host", "alpha", env=environment(tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == FRAME


def test_without_a_terminal_top_prints_the_same_frame_and_says_how_to_turn_sampling_on(tmp_path: Path) -> None:
    completed = run_st2("top", "--host", "alpha", "--sort", "context", env=environment(tmp_path, sampling=False))
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    assert lines[1] == ("sampling off: set DELEGATION_KIT_USAGE_HISTORY=<file> (env or knob file) so "
                        "`st2 usage verdict` records history for the sparkline")
    assert [line[2:].split()[1] for line in lines[4:-1]] == ["flaky", "remote", "reviewer", "builder", "sleeper"]


def test_filters_narrow_the_frame(tmp_path: Path) -> None:
    completed = run_st2("top", "--once", "--host", "alpha", "--state", "blocked", env=environment(tmp_path))
    assert completed.stdout.splitlines()[2] == "1 of 5 seats; 1 blocked on a human"
    assert completed.stdout.splitlines()[4].split()[:3] == ["!", "alpha", "reviewer"]


PROBE = """
import json, sys
sys.argv = ["st2", *sys.argv[2:]]
from st2.entry import main
status = main()
json.dump(sorted(sys.modules), open(sys.argv[1] if False else OUT, "w"))
raise SystemExit(status)
"""


def test_once_never_imports_textual(tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    code = f"OUT = {str(out)!r}\n" + PROBE
    completed = subprocess.run([sys.executable, "-c", code, "x", "top", "--once", "--host", "alpha"],
                               env=environment(tmp_path), cwd=REPO, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    modules = json.loads(out.read_text())
    assert "st2.top.plain" in modules
    assert [name for name in modules if name.split(".")[0] == "textual"] == []


def test_an_invalid_declarations_diagnostic_stays_on_its_seats_row(tmp_path: Path) -> None:
    env = environment(tmp_path)
    broken = Path(env["CATALOG"]) / "agents" / "alpha" / "broken"
    broken.mkdir()
    (broken / "agent.kdl").write_text('agent "broken" {\n    argv "sh"\n    restart { delay "a\\nb\\u{1b}[2J" }\n}\n')
    completed = run_st2("top", "--once", "--host", "alpha", env=env)
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    header = next(index for index, line in enumerate(lines) if line.startswith("  HOST"))
    rows = lines[header + 1:header + 7]  # six seats, one row each; the warnings follow the table
    assert [line[2:].split()[:2] for line in rows] == [
        ["alpha", "reviewer"], ["alpha", "broken"], ["alpha", "builder"], ["alpha", "flaky"], ["alpha", "sleeper"],
        ["beta", "remote"]], lines
    assert lines[header + 7].startswith("warning: agents/alpha/broken/agent.kdl:3:21: "), lines
    row = rows[1]
    assert ('invalid (agents/alpha/broken/agent.kdl:3:21: error[restart-invalid]: restart `delay` "a\\nb\\x1b[2J" '
            'is not a duration; help: write a number with a unit:') in row
