"""Hermetic kit sandboxes: the whole DELEGATION_KIT_* namespace stripped from the environment
the subject sees (derived at run time from the running process's own variables), a sandbox knob
file and config home, and helpers to run the real ``st2`` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def hermetic_environment(root: Path, **extra: str) -> dict[str, str]:
    """The running environment minus every DELEGATION_KIT_* and GATE_SDK_* variable, with HOME,
    XDG_CONFIG_HOME and the knob file inside ``root``."""
    environ = {name: value for name, value in os.environ.items()
               if not name.startswith(("DELEGATION_KIT_", "GATE_SDK_"))}
    knob_file = root / "delegation-config.knobs"
    if not knob_file.exists():
        knob_file.write_text("")
    environ.update(HOME=str(root), XDG_CONFIG_HOME=str(root / "config"), DELEGATION_KIT_KNOB_FILE=str(knob_file))
    environ.pop("CLAUDE_CONFIG_DIR", None)
    environ.update(extra)
    return environ


def run_st2(args: list[str], environ: dict[str, str], cwd: Path | str | None = None,
            stdin: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "st2", *args], cwd=cwd or REPO, env=environ, input=stdin,
        capture_output=True, timeout=timeout, check=False,
    )




def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def new_repository(path: Path) -> Path:
    """An empty git repository at ``path`` on branch main with a committer configured."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.invalid")
    git(path, "config", "user.name", "t")
    return path
