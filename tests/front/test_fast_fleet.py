"""`st2 up`, `down`, `tasks`, `validate` and `doctor` without click (st2/front/table.py,
st2/fleet.py) say what their click commands say: each case's steps run through the real
entry point and through the click CLI alone (st2.cli.run), each route on its own fresh copy of one
catalog at one path with its own state, and every step's stdout, stderr and exit status must
match exactly (the process ids a launch names are the only bytes masked). The recognized shapes
must really skip the click CLI; every other shape falls back to it, before anything has run."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO, route_commands, st2_env

pytestmark = pytest.mark.process

DEMO = REPO / "st2" / "demo" / "catalog"
BROKEN = 'agent "broken" {\n    argv "sh"\n    mystery-node 1\n}\n'
WALL_MS = "1796000000000"
PIDS = re.compile(rb"(pid |\[)\d+")

# Each case: the steps one route runs in order; the route named is the one the first step takes.
FAST = [
    [["tasks"], ["--host", "demo", "tasks"]],
    [["--host", "demo", "tasks", "--json"]],
    [["tasks", "--catalog={catalog}", "--host=demo", "--json"]],
    [["tasks", "--catalog", "{missing}", "--json"]],
    [["validate"]],
    [["validate", "--strict", "--json"]],
    [["--catalog", "{catalog}", "validate", "--json"]],
    [["doctor", "--host", "demo"]],
    [["doctor", "--catalog", "{missing}"]],
    [["--host", "demo", "up", "--materialize-only"]],
    [["--host", "demo", "up", "--once", "--interval", "5s"], ["--host", "demo", "tasks"],
     ["--host", "demo", "down", "planner"], ["--host", "demo", "down"]],
    [["up", "--host=demo", "--once", "--agent", "planner"], ["down", "--host", "demo"]],
]
FALLBACK = [
    [["tasks", "--help"]],
    [["tasks", "--jsn"]],
    [["validate", "--json", "--json"]],
    [["doctor", "extra"]],
    [["down", "--catalog", "{missing}"]],
    [["up", "--once", "--interval", "0s"]],
    [["up", "--once", "--interval", "9" * 400 + "d"]],
    [["up", "--once", "--agent", "planner", "--task", "demo.planner"]],
    [["up", "--once", "--interval=-5s"]],
    [["down", "--", "-planner"]],
]


def run_case(catalog: Path, tmp_path: Path, state: Path, steps: list[list[str]]) -> tuple[list[list[tuple]], str]:
    """Each route's outcomes, step by step: [entry point, click alone]; and the route the probe's
    first step took. ``state`` is the state directory every route uses in turn (a short path:
    a seat's tmux socket lives under it)."""
    outcomes, taken = [], ""
    for index, command in enumerate(route_commands(tmp_path / "route")):
        run = tmp_path / "run"  # one path for every route: findings and errors name it
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(catalog, run / "catalog", symlinks=True)
        shutil.rmtree(state, ignore_errors=True)
        env = st2_env(run / "catalog", ST2_CLOCK_WALL_MS=WALL_MS, XDG_STATE_HOME=str(state))
        said = []
        try:
            for number, words in enumerate(steps):
                argv = [word.format(catalog=run / "catalog", missing=tmp_path / "missing") for word in words]
                result = subprocess.run([*command, *argv], capture_output=True, env=env, cwd=REPO, timeout=60)
                said.append((result.returncode, PIDS.sub(rb"\1N", result.stdout), PIDS.sub(rb"\1N", result.stderr)))
                if index == 2 and number == 0:
                    taken = (tmp_path / "route").read_text()
        finally:  # whatever a step launched ends with its route
            if any("up" in words for words in steps):
                subprocess.run([sys.executable, "-m", "st2", "--host", "demo", "down"], capture_output=True, env=env,
                               cwd=REPO, timeout=60)
        if index < 2:
            outcomes.append(said)
    return outcomes, taken


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "fixture" / "catalog"
    shutil.copytree(DEMO, root)
    (root / "agents" / "demo" / "broken").mkdir()
    (root / "agents" / "demo" / "broken" / "agent.kdl").write_text(BROKEN)
    return root


@pytest.mark.parametrize(("route", "steps"), [("fast", steps) for steps in FAST] + [("click", steps) for steps in FALLBACK],
                         ids=lambda value: value if isinstance(value, str) else " / ".join(" ".join(words)[:40]
                                                                                          for words in value))
def test_each_route_says_what_the_click_command_says(catalog: Path, tmp_path: Path, short_dir: Path, route: str,
                                                      steps) -> None:
    (fast, clicked), taken = run_case(catalog, tmp_path, short_dir, steps)
    assert taken == route
    assert fast == clicked
    assert any(stdout or stderr for _, stdout, stderr in fast)  # the case said something


def test_a_launch_by_the_fast_route_is_a_real_launch(catalog: Path, tmp_path: Path, short_dir: Path) -> None:
    """The fast route's ``up --once`` starts the declared seats (their tasks read running) and its
    ``down`` stops them: the same work, not only the same words."""
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=WALL_MS, XDG_STATE_HOME=str(short_dir))

    def st2(*words: str) -> subprocess.CompletedProcess:
        return subprocess.run([*route_commands(tmp_path / "route")[2], "--host", "demo", *words],
                              capture_output=True, text=True, env=env, cwd=REPO, timeout=60)

    try:
        assert st2("up", "--once").returncode == 1   # the broken seat's declaration is an error
        assert (tmp_path / "route").read_text() == "fast"
        listed = st2("tasks").stdout
        assert re.search(r"demo\.planner\s+pty\s+running pid \d+", listed), listed
        stopped = st2("down")
        assert stopped.returncode == 0 and "stopped demo.planner\n" in stopped.stdout, stopped.stdout + stopped.stderr
        assert "running" not in st2("tasks").stdout
    finally:
        subprocess.run([sys.executable, "-m", "st2", "--host", "demo", "down"], capture_output=True, env=env,
                       cwd=REPO, timeout=60)
