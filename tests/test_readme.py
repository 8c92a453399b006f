"""The README's two set-up commands work from a fresh clone in a clean HOME."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    block = re.search(r"## Set up.*?```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_keeps_exactly_the_two_commands() -> None:
    assert readme_commands() == ["scripts/dev demo", "scripts/dev test"]
    ci = (REPO / ".ci" / "run").read_text()
    assert "exec scripts/dev test\n" in ci


@pytest.mark.process
@pytest.mark.long
def test_the_readme_commands_work_from_a_fresh_clone(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": os.environ["PATH"],
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "LANG": "C.UTF-8",
        "ST2_LAB_SETUP": "skip",
    }
    demo = subprocess.run(["scripts/dev", "demo"], cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    json_line = next(line for line in demo.stdout.splitlines() if line.startswith("[{"))
    rows = json.loads(json_line)
    assert [row["identity"] for row in rows] == ["demo.builder", "demo.planner", "demo.reviewer"]
    assert rows[2]["desiredState"] == "suspended"
    assert rows[2]["desiredStateReason"] == "waiting for CI"
    # The test command itself, narrowed to one file so this test does not recurse into itself, in
    # one process (-n 0: bringing up several workers per core for two tests cost ~10 s of the suite).
    tests = subprocess.run(["scripts/dev", "test", "tests/test_invariants.py", "-n", "0"], cwd=clone, env=env,
                           capture_output=True, text=True, timeout=600)
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-3000:]
    assert re.search(r"\b2 passed\b", tests.stdout), tests.stdout[-2000:]
