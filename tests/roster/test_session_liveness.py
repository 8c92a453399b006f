"""The roster's same-host PTY liveness cross-check: a live observed state whose session is
provably gone reads unknown(session-dead); anything short of proof downgrades nothing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from st2.runtime import launch_record
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope
from st2.runtime.session_probe import ALIVE, DEAD, INDETERMINATE, SessionProbe
from support import run_st2, st2_env


@pytest.fixture
def short_root():
    directory = Path(tempfile.mkdtemp(prefix="st2l-", dir="/tmp"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def write_launch_record(state: Path, catalog: Path, runtime_id: str, pid: int, start_time: float) -> None:
    """A PTY launch record exactly as the supervisor writes it (the shared writer)."""
    scope = RuntimeScope(catalog, "h", state / "st2")
    launch_record.write(scope, LaunchRecord(
        runtime_id=runtime_id, kind="pty", pid=pid, start_time=start_time, created_at="2026-01-01T00:00:00.000Z",
        generation_id="sha256:0", argv_digest="sha256:0", launched_at_ms=0, supervisor_pid=os.getpid(),
        socket=str(state / "s"), server_pid=pid))


def own_start_time(pid: int) -> float:
    from st2.process.identity import observe

    return observe(pid).start_time


@pytest.mark.process
def test_the_probe_needs_proof_to_call_a_session_dead(short_root: Path, monkeypatch) -> None:
    state, catalog = short_root / "state", short_root / "catalog"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        start = own_start_time(sleeper.pid)
        write_launch_record(state, catalog, "h.alive", sleeper.pid, start)
        write_launch_record(state, catalog, "h.reused", sleeper.pid, start - 30.0)
        (state / "st2" / "scopes").mkdir(exist_ok=True)
        probe = SessionProbe(str(catalog), "h")
        assert probe("h.alive") == ALIVE
        assert probe("h.reused") == DEAD  # the PID now belongs to another process
        assert probe("h.unrecorded") == INDETERMINATE
        assert probe("other.alive") == INDETERMINATE  # another host's session
        tasks = next((state / "st2" / "scopes").glob("*/h/tasks"))
        (tasks / "h.garbage.json").write_text("{not json")
        assert probe("h.garbage") == INDETERMINATE
    finally:
        sleeper.kill()
        sleeper.wait()
    assert probe("h.alive") == DEAD  # reaped: no such process


@pytest.mark.process
def test_a_live_state_of_a_killed_session_reads_session_dead(short_root: Path) -> None:
    catalog = short_root / "catalog"
    for host in ("h", "other"):
        seat = catalog / "agents" / host / "worker"
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text('agent "worker" {\n    argv "sh" "-c" "while :; do sleep 60; done"\n}\n')
    env = st2_env(catalog, XDG_STATE_HOME=str(short_root / "state"), ST2_TRANSPORT="setsid")
    try:
        up = run_st2("up", "--once", "--host", "h", env=env)
        assert up.returncode == 0, up.stderr
        now = int(time.time() * 1000)
        for host in ("h", "other"):
            (catalog / "agents" / host / "worker" / "harness-state").write_text(json.dumps({
                "schema": "st2.harness-state.v1", "agent": "worker", "harness": "claude", "state": "active",
                "blockedOn": "none", "inputBuffer": "empty", "ask": "none", "ptySession": f"{host}.worker",
                "incarnation": "t", "seq": 1, "sinceMs": now, "writtenAtMs": now, "transitions": 1}) + "\n")

        def observed() -> dict[str, str]:
            result = run_st2("--host", "h", "agents", "--json", env=env)  # every host's seats, as h
            assert result.returncode == 0, result.stderr
            return {row["identity"]: (row["observedState"]["state"], row["observedState"]["reason"])
                    for row in json.loads(result.stdout)}

        assert observed() == {"h.worker": ("active", None), "other.worker": ("active", None)}
        tasks = json.loads(run_st2("tasks", "--json", "--host", "h", env=env).stdout)["tasks"]
        pid = next(task["runtime"]["pid"] for task in tasks if task["runtimeId"] == "h.worker")
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 20
        while observed()["h.worker"] != ("unknown", "session-dead"):
            assert time.monotonic() < deadline, observed()
            time.sleep(0.2)
        # The other host's seat has no local evidence either way and keeps its own reading.
        assert observed()["other.worker"] == ("active", None)
    finally:
        run_st2("down", "--host", "h", env=env)


@pytest.mark.process
def test_a_seat_st2_down_stopped_never_reads_live_again_until_relaunched(short_root: Path) -> None:
    # `st2 down` kills the seat and removes its launch record; a fresh `active` record written
    # after (the killed harness's last write, a stale writer) must read unknown(session-dead),
    # not obs:active for the next 15 minutes. A relaunch ends the tombstone.
    from st2.base.clock import SYSTEM_CLOCK

    state, catalog = short_root / "state", short_root / "catalog"
    seat = catalog / "agents" / "h" / "w"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "w" {\n    argv "sleep" "600"\n}\n')
    env = st2_env(catalog, XDG_STATE_HOME=str(state))

    def observed() -> dict:
        record = {"schema": "st2.harness-state.v1", "agent": "h.w", "harness": "claude", "state": "active",
                  "blockedOn": "none", "inputBuffer": "empty", "ask": "none", "ptySession": "h.w",
                  "incarnation": "t", "seq": 1, "sinceMs": SYSTEM_CLOCK.wall_ms(),
                  "writtenAtMs": SYSTEM_CLOCK.wall_ms(), "transitions": 1}
        (seat / "harness-state").write_text(json.dumps(record) + "\n")
        roster = run_st2("agents", "--json", "--host", "h", env=env)
        return json.loads(roster.stdout)[0]["observedState"]

    try:
        assert run_st2("up", "--once", "--host", "h", env=env).returncode == 0
        assert observed()["state"] == "active"
        assert run_st2("down", "--host", "h", env=env).returncode == 0
        after = observed()
        assert (after["state"], after["reason"]) == ("unknown", "session-dead")
        assert run_st2("up", "--once", "--host", "h", env=env).returncode == 0
        assert observed()["state"] == "active"
    finally:
        run_st2("down", "--host", "h", env=env)
