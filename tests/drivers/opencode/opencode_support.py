"""Helpers for the opencode wrapper's process tests: a seat, the wrapper around the stand-in
server (tests/drivers/opencode/standin_opencode.py), the stand-in's durable logs, and polling."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
REPO = HERE.parents[2]
if str(HERE.parent / "codex") not in sys.path:
    sys.path.append(str(HERE.parent / "codex"))

from codex_support import HOST, record, write_message  # noqa: E402,F401 (re-exported)
from codex_support import Wrapper as CodexWrapper  # noqa: E402
from support import poll_for  # noqa: E402,F401

STANDIN = HERE / "standin_opencode.py"


def make_seat(catalog: Path, identity: str = "oc") -> Path:
    seat = catalog / "agents" / HOST / identity
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (seat / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    opencode {{ model "fake/fake-model" }}\n}}\n')
    return seat


def standin_executable(tmp_path: Path) -> Path:
    script = tmp_path / "opencode"
    if not script.exists():
        script.write_text(f"#!/bin/sh\nexec {sys.executable} {STANDIN} \"$@\"\n")
        script.chmod(0o755)
    return script


class Wrapper:
    """``st2 driver opencode-session`` as a real process, its stdin a pipe (the keyboard)."""

    def __init__(self, catalog: Path, tmp_path: Path, env: dict | None = None, identity: str = "oc",
                 executable: Path | None = None) -> None:
        self.standin_dir = tmp_path / "standin"
        self.standin_dir.mkdir(exist_ok=True)
        self.state = tmp_path / "state"
        self.output = tmp_path / f"wrapper-{time.monotonic_ns()}.out"
        environment = {key: value for key, value in os.environ.items() if not key.startswith("ST_AGENT")}
        environment.update(XDG_STATE_HOME=str(self.state), STANDIN_DIR=str(self.standin_dir))
        environment.update(env or {})
        argv = [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "opencode-session",
                "--identity", f"{HOST}.{identity}", "--model", "fake/fake-model", "--",
                str(executable or standin_executable(tmp_path)), "serve"]
        self.handle = self.output.open("wb")
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=self.handle, stderr=subprocess.STDOUT,
                                        env=environment, cwd=tmp_path, start_new_session=True)

    def text(self) -> str:
        return self.output.read_text(errors="replace")

    def launches(self) -> list[int]:
        path = self.standin_dir / "launches"
        return [int(word) for word in path.read_text().split()] if path.exists() else []

    def model_requests(self) -> list[str]:
        path = self.standin_dir / "model-requests.jsonl"
        if not path.exists():
            return []
        return [json.loads(line)["last_user_text"] for line in path.read_text().splitlines() if line.strip()]

    def persisted_user_texts(self) -> list[str]:
        """The text of every user message the stand-in persisted in its sessions (what a
        read-back finds), in order."""
        path = self.standin_dir / "messages.jsonl"
        if not path.exists():
            return []
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return ["".join(part.get("text", "") for part in row["parts"]) for row in rows if row["info"]["role"] == "user"]

    def ledger(self) -> dict:
        path = next(iter(self.state.glob("**/delivery/*/delivery-ledger.json")), None)
        return {entry["filename"]: entry for entry in json.loads(path.read_text())["entries"]} if path else {}

    # The same stop as the Codex wrapper's (signal, bounded wait, group kill past the bound).
    stop = CodexWrapper.stop


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
