"""Helpers for the delegation guards' tests (imported by path; see conftest.py): real child processes ended by PID, stub readers
written by a child process, and the real hooks run as subprocesses in a chosen directory."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
PAYLOAD = '{"session_id":"s-1","hook_event_name":"SubagentStop","stop_hook_active":false}'
CONTINUING = '{"session_id":"s-1","hook_event_name":"SubagentStop","stop_hook_active":true}'
PAYLOAD_KEYS = "hook_event_name,session_id,stop_hook_active"


def hermetic_env(**extra: str) -> dict[str, str]:
    """The test process's environment without any delegation or gate-sdk knob, plus ``extra``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("DELEGATION_KIT_", "GATE_SDK_", "ST2_LIVENESS", "PYTHONPATH"))
    }
    env.update(extra)
    return env


def knob_file(path: Path, **indexed: str) -> dict[str, str]:
    """Write each indexed knob (one element per line of its value) as ``NAME[] = element`` lines
    of a knob file at ``path``; return the environment naming it. The tier knobs have no
    environment spelling, so a case binding them writes them here."""
    lines = [f"{name}[] = {element}" for name, value in indexed.items() for element in value.split("\n") if element != ""]
    path.write_text("".join(line + "\n" for line in lines))
    return {"DELEGATION_KIT_KNOB_FILE": str(path)}


def run_hook(member: str, cwd: Path, payload: str | None, **extra: str) -> subprocess.CompletedProcess:
    """Run the real ``st2 hook <member>`` with ``payload`` on stdin from ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "st2", "hook", member],
        input=payload if payload is not None else "",
        capture_output=True,
        text=True,
        cwd=cwd,
        env=hermetic_env(**extra),
        timeout=60,
    )


def write_by_child(path: Path, text: str, executable: bool = False) -> Path:
    """Write ``text`` to ``path`` from a child process, so this test process never holds a
    write descriptor a sibling fork could inherit (which makes a fresh stub ETXTBSY)."""
    script = 'printf "%s" "$1" > "$2"' + (' && chmod +x "$2"' if executable else "")
    subprocess.run(["sh", "-c", script, "sh", text, str(path)], check=True)
    return path


class Children:
    """Child processes a test starts; ended by PID at teardown."""

    def __init__(self) -> None:
        self.processes: list[subprocess.Popen] = []

    def sleeper(self, seconds: int = 120) -> subprocess.Popen:
        process = subprocess.Popen(["sleep", str(seconds)], start_new_session=True)
        self.processes.append(process)
        return process

    def exited(self) -> int:
        """The PID of a child that has exited and been reaped."""
        process = subprocess.Popen(["true"])
        process.wait()
        return process.pid

    def end(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()


def log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True) if path.exists() else []


def assert_log_line(line: str, expected_fields: str) -> None:
    """A stop-log line is a UTC stamp followed by exactly ``expected_fields`` (a full string)."""
    stamp, rest = line[:20], line[20:]
    assert STAMP.fullmatch(stamp), line
    assert rest == expected_fields + "\n", line
