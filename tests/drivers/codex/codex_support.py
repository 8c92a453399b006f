"""Helpers for the Codex wrapper's process tests: a seat, the wrapper around the stand-in
app-server (or the real binary), mail, and polling (no bare sleeps)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from st2.bus.envelope import render
from st2.bus.filename import new_filename
from support import poll_for  # noqa: F401 (re-exported for the tests)

HERE = Path(__file__).parent
STANDIN = HERE / "standin_app_server.py"
REPO = HERE.parents[2]
HOST = "h"


def make_seat(catalog: Path, identity: str = "coder", operator: str | None = None) -> Path:
    seat = catalog / "agents" / HOST / identity
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (seat / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    block = f'codex {{ operator "{operator}" }}' if operator else "codex"
    (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    {block}\n}}\n')
    if operator:
        principal = catalog / "principals" / HOST / operator
        principal.mkdir(parents=True, exist_ok=True)
        (principal / "principal.kdl").write_text(f'principal "{operator}" host="{HOST}"\n')
    return seat


_last = [0]


def write_message(seat: Path, subject: str, body: str = "hello", sender: str = "h.planner") -> str:
    stamp = max(int(time.time() * 1000), _last[0] + 1)
    _last[0] = stamp
    name = new_filename(stamp)
    temporary = seat / "resources" / f".{name}.tmp"
    temporary.write_bytes(render(sender, subject, None, (), None, body))
    os.replace(temporary, seat / "resources" / "inbox" / name)
    return name


def record(seat: Path, name: str):
    try:
        return json.loads((seat / name).read_text())
    except (FileNotFoundError, ValueError):
        return None


class Wrapper:
    """``st2 driver codex-session`` as a real process, its stdin a pipe (the keyboard)."""

    def __init__(self, catalog: Path, tmp_path: Path, codex_argv: list[str] | None = None,
                 env: dict | None = None, operator: str | None = None, identity: str = "coder") -> None:
        self.standin_dir = tmp_path / "standin"
        self.standin_dir.mkdir(exist_ok=True)
        self.output = tmp_path / f"wrapper-{time.monotonic_ns()}.out"
        environment = {key: value for key, value in os.environ.items() if not key.startswith("ST_AGENT")}
        environment.update(XDG_STATE_HOME=str(tmp_path / "state"), STANDIN_DIR=str(self.standin_dir))
        environment.update(env or {})
        argv = [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "codex-session",
                "--identity", f"{HOST}.{identity}"]
        if operator:
            argv += ["--operator", operator]
        argv += ["--", *(codex_argv or [str(STANDIN), "app-server"])]
        self.handle = self.output.open("wb")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=self.handle, stderr=subprocess.STDOUT,
                                        env=environment, cwd=tmp_path, start_new_session=True)

    def type(self, line: str) -> None:
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def history(self) -> list[str]:
        path = self.standin_dir / "history.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]

    def stop(self, number: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.process.poll() is None:
            os.kill(self.process.pid, number)
        try:
            return self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self.handle.close()
