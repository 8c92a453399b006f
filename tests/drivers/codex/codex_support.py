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


class Sink:
    """The connection's writing side: answers are recorded, never sent."""

    def __init__(self) -> None:
        self.frames: list = []
        self.next_id = 0
        self.read_fd = -1

    def request(self, method, params):
        self.next_id += 1
        self.frames.append((method, params))
        return self.next_id

    def notify(self, method, params=None):
        self.frames.append((method, params))

    def respond(self, request_id, result):
        self.frames.append(("respond", request_id, result))

    def respond_error(self, request_id, code, message):
        self.frames.append(("error", request_id, code))



def offline_session(catalog: Path, tmp_path: Path, clock=None):
    """A :class:`CodexSession` over a fresh seat, started as far as its records (claim, context
    writer, control store) with a :class:`Sink` for a connection: its frame handling and
    delivery run in process, on ``clock`` (a FakeClock by default), with no app-server."""
    from st2.base.clock import FakeClock
    from st2.drivers.codex.control import ControlStore
    from st2.drivers.codex.session import CodexSession
    from st2.drivers.seat import Seat
    from st2.records import driver_diagnostic, harness_context

    directory = catalog / "agents" / HOST / "coder"
    (directory / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text('agent "coder" {\n    codex\n}\n')
    session = CodexSession(Seat(directory, f"{HOST}.coder"), f"{HOST}.coder", ["codex", "app-server"],
                           clock or FakeClock(), catalog, state_dir=tmp_path / "state", stdin_fd=None,
                           stream=open(os.devnull, "w"))
    session.diagnostics = driver_diagnostic.Publisher(directory, "codex", session.clock)
    session.records.claim()
    session.context_writer = harness_context.Writer(directory, f"{HOST}.coder", "codex", session.records.token,
                                                    session.clock)
    session.control_store = ControlStore(session.control_path, session.scope_staging, f"{HOST}.coder",
                                         f"{HOST}.coder", session.records.token)
    session.binding_to_resume = None
    session.connection = Sink()
    return session
