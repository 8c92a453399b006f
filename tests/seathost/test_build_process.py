"""A seat host of this very build serves a supervisor however the environment's interpreter was
named: ``python -m st2 up`` starts the seat host with the ``st2`` script, whose shebang names the
interpreter ``python3``, and the two must read as one build (st2.seathost.wire.build_id)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from supervisor_support import Fleet

pytestmark = pytest.mark.process

BIN = Path(sys.executable).parent


def build_under(name: str) -> str:
    return subprocess.run([str(BIN / name), "-c", "from st2.seathost import wire; print(wire.build_id())"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()


def test_every_name_of_the_environments_interpreter_is_one_build() -> None:
    names = [name for name in ("python", "python3", f"python{sys.version_info[0]}.{sys.version_info[1]}")
             if (BIN / name).exists()]
    assert len(names) >= 2, names
    assert len({build_under(name) for name in names}) == 1


@pytest.mark.skipif(not (BIN / "st2").exists(), reason="no st2 script beside this interpreter")
def test_a_supervisor_run_as_python_m_st2_is_served_by_the_seat_host_the_st2_script_starts() -> None:
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2b-"))
    fleet = Fleet(base)
    try:
        # The seat host is started with the st2 script found on PATH beside this interpreter.
        fleet.env["PATH"] = f"{BIN}:{fleet.env.get('PATH', '')}"
        seat = fleet.seat("a", '    argv "sleep" "600"\n    ding')
        (seat / "resources" / "inbox").mkdir(parents=True)
        once = subprocess.run([sys.executable, "-m", "st2", "up", "--once", "--host", fleet.host],
                              capture_output=True, text=True, env=fleet.env, timeout=120)
        said = once.stdout + once.stderr
        assert once.returncode == 0, said
        assert "seat host started as pid" in said and "no seat host answers" not in said, said
    finally:
        fleet.cleanup()
        stop_seat_host(fleet)
        shutil.rmtree(base, ignore_errors=True)


def stop_seat_host(fleet: Fleet) -> None:
    """The seat host keeps running past ``up --once``; end the one this test started (its pid
    from its own hello), by PID."""
    from st2.seathost import wire

    try:
        answer = wire.request(wire.socket_path(fleet.scope.directory), {"op": "hello"}, timeout=2.0)
    except OSError:
        return
    for pid in (answer.get("pid"), answer.get("zygote")):
        if isinstance(pid, int):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def test_st2_down_returns_only_once_the_seat_host_and_the_ding_service_are_gone() -> None:
    """Whole-host teardown retires the DING service, then the seat host, and waits for each
    process to end: a caller sweeping processes right after `st2 down` (`st2 eval`'s leftover
    count) finds none of them, and no DING service outlives the seat host to start another."""
    from st2.ding import service_wire
    from st2.process.identity import observe
    from st2.seathost import wire

    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2b-"))
    fleet = Fleet(base)
    try:
        fleet.env["PATH"] = f"{BIN}:{fleet.env.get('PATH', '')}"
        seat = fleet.seat("a", '    argv "sleep" "600"\n    ding')
        (seat / "resources" / "inbox").mkdir(parents=True)
        assert fleet.st2("up", "--once").returncode == 0
        pids = []
        for socket in (wire.socket_path(fleet.scope.directory), service_wire.socket_path(fleet.scope.directory)):
            for _ in range(200):   # the DING service starts with the notifier, just after the pass
                try:
                    pids.append(wire.request(socket, {"op": "hello"}, timeout=2.0)["pid"])
                    break
                except OSError:
                    time.sleep(0.05)
        assert len(pids) == 2, pids
        assert fleet.st2("down").returncode == 0
        assert [pid for pid in pids if observe(pid) is not None] == []
    finally:
        fleet.cleanup()
        stop_seat_host(fleet)
        shutil.rmtree(base, ignore_errors=True)
