"""`st2 agents` without click (st2/front/table.py, st2/front/verbs.py) is byte-identical to the
click command: each
argv runs through the real entry point and through the click CLI alone (st2.cli.run) on the same
catalog path, each with a fresh declaration cache, and stdout, stderr and exit status must match
exactly. The recognized shapes must really skip the click CLI; every other shape falls back."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, build
from support import REPO, route_commands, st2_env

pytestmark = pytest.mark.process

BROKEN = 'agent "g-broken" {\n    argv "sh"\n    mystery-node 1\n}\n'

FAST = [
    ["agents", "--json"],
    ["agents"],
    ["agents", "--enrich"],
    ["agents", "--json", "--enrich"],
    ["--host", "alpha", "agents", "--json"],
    ["--host=beta", "agents"],
    ["agents", "--host", "beta", "--json"],
    ["agents", "--status", "busy", "--json"],
    ["agents", "--status=offline"],
    ["agents", "--identity", "alpha.a-fresh", "--json"],
    ["--host", "alpha", "agents", "--identity", "a-fresh"],
    ["--catalog", "{catalog}", "agents", "--json"],
    ["agents", "--catalog={catalog}", "--enrich"],
    ["agents", "--identity", "alpha.nobody", "--status", "busy"],
    ["agents", "--identity", "alpha.nobody"],
]
FALLBACK = [
    ["agents", "--help"],
    ["agents", "--status", "bogus"],
    ["agents", "--jso"],
    ["agents", "extra"],
    ["agents", "--json", "--json"],
    ["agents", "--identity"],
    ["--catalog", "{missing}", "agents"],
    ["agents", "--catalog", "{catalog}/agents/alpha/a-fresh/agent.kdl"],
    ["--version", "agents"],
    ["agents", "--", "--json"],
]


def routes(catalog: Path, tmp_path: Path, words: list[str]) -> tuple[list[tuple], str]:
    outcomes, taken = [], ""
    for index, command in enumerate(route_commands(tmp_path / "route")):
        run = tmp_path / "run"  # one path for every route: warnings and errors name it
        shutil.rmtree(run, ignore_errors=True)
        shutil.copytree(catalog, run / "catalog", symlinks=True)
        env = st2_env(run / "catalog", ST2_CLOCK_WALL_MS=str(NOW_MS), XDG_STATE_HOME=str(run / "state"))
        argv = [word.format(catalog=run / "catalog", missing=tmp_path / "missing") for word in words]
        result = subprocess.run([*command, *argv], capture_output=True, env=env, cwd=REPO, timeout=60)
        if index < 2:
            outcomes.append((result.returncode, result.stdout, result.stderr))
        else:
            taken = (tmp_path / "route").read_text()
    return outcomes, taken


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = build(tmp_path / "fixture" / "catalog")
    (root / "agents" / "alpha" / "g-broken").mkdir(parents=True)
    (root / "agents" / "alpha" / "g-broken" / "agent.kdl").write_text(BROKEN)
    return root


@pytest.mark.parametrize(("route", "words"), [("fast", words) for words in FAST] + [("click", words) for words in FALLBACK])
def test_each_route_prints_what_the_click_command_prints(catalog: Path, tmp_path: Path, route: str, words) -> None:
    (fast, clicked), taken = routes(catalog, tmp_path, words)
    assert taken == route
    assert fast == clicked
    assert fast[1] or fast[2]  # something was said either way
