"""Process-tier helpers for the supervisor tests (a temp fleet, polling, a NOTIFY_SOCKET)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from support import REPO, poll_for, run_st2, st2_env  # noqa: F401 (poll_for re-exported)

from st2.runtime import launch_record
from st2.process.identity import observe
from st2.supervisor.backends.process_group import kill_group, reap_children
from st2.runtime.scope import RuntimeScope




HOST = "h"


class Fleet:
    """A temp catalog with short paths for one host (``h`` unless told), its runtime scope, and
    the `st2 up` processes a test starts. Teardown kills only what it started: the supervisors by PID, then every recorded
    task (tmux server via its own socket, whole process groups)."""

    def __init__(self, base: Path, host: str = HOST) -> None:
        self.base = base
        self.host = host
        self.catalog = base / "c"
        (self.catalog / "agents" / host).mkdir(parents=True)
        self.state = base / "s"
        self.env = st2_env(self.catalog, XDG_STATE_HOME=str(self.state), ST2_TRANSPORT="setsid")
        self.env.pop("NOTIFY_SOCKET", None)
        self.supervisors: list[subprocess.Popen] = []
        self.logs: list[Path] = []
        self.scope = RuntimeScope(self.catalog, host, state_dir=self.state / "st2")

    # catalog authoring -----------------------------------------------------------------
    def seat(self, identity: str, body: str, host: str | None = None) -> Path:
        """Publish ``agents/<host>/<identity>/agent.kdl`` (this fleet's host unless told) by atomic rename."""
        host = host or self.host
        directory = self.catalog / "agents" / host / identity
        directory.mkdir(parents=True, exist_ok=True)
        temporary = self.base / f".{identity}.kdl.tmp"
        temporary.write_text(f'agent "{identity}" {{\n{body}\n}}\n')
        os.replace(temporary, directory / "agent.kdl")
        return directory

    # supervisors -------------------------------------------------------------------------
    def up(self, *arguments: str, command: list[str] | None = None, env: dict | None = None) -> subprocess.Popen:
        log = self.base / f"up-{len(self.logs)}.log"
        self.logs.append(log)
        handle = open(log, "w")
        process = subprocess.Popen(
            [*(command or [sys.executable, "-m", "st2"]), "up", "--host", self.host, *arguments],
            stdout=handle, stderr=subprocess.STDOUT, env=env or self.env, cwd=REPO,
            start_new_session=True,
        )
        handle.close()
        self.supervisors.append(process)
        return process

    def log(self, index: int = -1) -> str:
        return self.logs[index].read_text()

    def st2(self, *arguments: str, timeout: float = 60) -> subprocess.CompletedProcess:
        return run_st2(*arguments, "--host", self.host, env=self.env, timeout=timeout)

    def tasks(self) -> dict:
        result = self.st2("tasks", "--json")
        return json.loads(result.stdout)

    def record(self, runtime_id: str):
        return launch_record.read(self.scope, runtime_id)

    def running(self) -> dict[str, tuple[int, float]]:
        """runtime id -> (pid, start time) of every recorded task that is alive as recorded."""
        alive = {}
        for runtime_id in launch_record.recorded_ids(self.scope):
            record = self.record(runtime_id)
            if record is None:   # removed between the listing and the read (a stop in progress)
                continue
            current = observe(record.pid)
            if current is not None and abs(current.start_time - record.start_time) < 0.05:
                alive[runtime_id] = (record.pid, record.start_time)
        return alive

    def stop(self, process: subprocess.Popen, number: int = signal.SIGTERM) -> int:
        process.send_signal(number)
        return process.wait(timeout=20)

    def cleanup(self) -> None:
        for process in self.supervisors:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        for runtime_id in launch_record.recorded_ids(self.scope):
            try:
                record = self.record(runtime_id)
            except Exception:
                continue
            if record.socket:
                subprocess.run(["tmux", "-S", record.socket, "kill-server"], capture_output=True)
            kill_group(record.identity, grace_seconds=1)
        for socket_path in (self.scope.sockets.glob("*") if self.scope.sockets.exists() else []):
            subprocess.run(["tmux", "-S", str(socket_path), "kill-server"], capture_output=True)
        reap_children()


class NotifyListener:
    """A NOTIFY_SOCKET the test owns: counts the supervisor's sd_notify STATUS lines (one per
    pass) and READY."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind(str(path))
        self.socket.setblocking(False)
        self.messages: list[str] = []

    def collect(self) -> list[str]:
        while True:
            try:
                self.messages.append(self.socket.recv(65536).decode())
            except BlockingIOError:
                return self.messages

    def passes(self) -> int:
        return sum(1 for message in self.collect() if message.startswith("STATUS=pass "))

    def wakeups(self) -> int:
        """How often the supervisor's wait returned (it sends WATCHDOG=1 on every wake-up, once it
        has read the wake-up's filesystem events and before it decides whether they are worth a
        pass: an event written after a WATCHDOG=1 is seen wakes it again)."""
        return sum(1 for message in self.collect() if message == "WATCHDOG=1")

    def settle(self, probe: Path) -> None:
        """Return once the supervisor has handled every catalog event before now: rewrite
        ``probe`` (a seat file it drains without a pass) and wait for the wake-up, twice. The loop
        is serial, so by the second wake-up any pass the earlier events caused has reported."""
        for round_number in range(2):
            before = self.wakeups()
            probe.write_text(f"available\n")
            poll_for(lambda: self.wakeups() > before, f"supervisor wake-up {round_number + 1} on {probe}", timeout=10)

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def listener(fleet):
    """A NOTIFY_SOCKET for the fleet's supervisors: the test reads their passes and wake-ups.
    (A fixture: a conftest that imports it and defines ``fleet`` offers it.)"""
    notify = NotifyListener(fleet.base / "n")
    fleet.env["NOTIFY_SOCKET"] = str(notify.path)
    yield notify
    notify.close()


@contextlib.contextmanager
def temporary_fleet(prefix: str):
    """A :class:`Fleet` in a short temp directory, cleaned up (its processes killed) afterwards."""
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix=prefix))
    group = Fleet(base)
    try:
        yield group
    finally:
        group.cleanup()
        shutil.rmtree(base, ignore_errors=True)
