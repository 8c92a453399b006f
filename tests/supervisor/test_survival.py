"""R11 control-plane replacement safety and transport isolation, at the process tier: real
`st2 up`, real tmux, real signals."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

import st2

from replacement_build import build_identity, replacement_build
from supervisor_support import poll_for
from st2.process.identity import observe
from st2.supervisor.backends.process_group import group_alive

pytestmark = pytest.mark.process

SEATS = ("one", "two", "three")


def declare_three_seats(fleet) -> None:
    for identity in SEATS:
        fleet.seat(identity, '    argv "sleep" "600"\n    exec "worker" { argv "sh" "-c" "sleep 600 & wait"; }')


def all_six(fleet):
    running = fleet.running()
    return running if len(running) == 6 else None


def first_generation(fleet) -> dict:
    declare_three_seats(fleet)
    fleet.up("--interval", "60s")
    live = poll_for(lambda: all_six(fleet), timeout=20)
    assert live, fleet.log()
    assert sorted(live) == sorted([f"h.{s}" for s in SEATS] + [f"h.{s}.worker" for s in SEATS])
    return live


def stop_first(fleet, how: str) -> None:
    first = fleet.supervisors[0]
    if how.startswith("sigkill"):
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
    else:
        assert fleet.stop(first, signal.SIGTERM) == 0


@pytest.mark.parametrize("how", ["sigterm", "sigkill", "replaced-build", "sigkill-then-replaced-build"])
def test_every_task_survives_the_supervisor_and_is_adopted_exactly_once(fleet, how):
    live = first_generation(fleet)
    assert poll_for(lambda: f"(st2 {st2.__version__} from {Path(st2.__file__).parent})" in fleet.log(), timeout=10)
    stop_first(fleet, how)
    assert fleet.running() == live, "stopping the supervisor must not touch a task"

    if how.endswith("replaced-build"):
        entry = replacement_build(fleet.base, "r11-replacement")
        version, package = build_identity(entry)
        fleet.up("--interval", "60s", command=[str(entry)])
        announced = f"(st2 {version} from {package})"
        assert poll_for(lambda: announced in fleet.log(), timeout=20), fleet.log()
    else:
        fleet.up("--interval", "60s")
    assert poll_for(lambda: fleet.log().count("adopted ") == 6, timeout=20), fleet.log()
    log = fleet.log()
    assert "launched" not in log and "restarted" not in log, log
    assert fleet.running() == live

    inventory = fleet.tasks()
    assert inventory["complete"] is True, inventory
    ids = [row["runtimeId"] for row in inventory["tasks"]]
    assert sorted(ids) == sorted(live) and len(ids) == len(set(ids))
    for row in inventory["tasks"]:
        assert row["runtime"]["state"] == "running"
        assert row["runtime"]["pid"] == live[row["runtimeId"]][0]


def test_tasks_never_share_the_supervisors_group_or_session(fleet):
    live = first_generation(fleet)
    supervisor = fleet.supervisors[0].pid
    for runtime_id, (pid, _) in live.items():
        assert os.getpgid(pid) != os.getpgid(supervisor), runtime_id
        assert os.getsid(pid) != os.getsid(supervisor), runtime_id
    # A signal to the supervisor's whole process group reaches no task.
    os.killpg(os.getpgid(supervisor), signal.SIGKILL)
    fleet.supervisors[0].wait(timeout=10)
    assert fleet.running() == live


def test_explicit_teardown_kills_every_task_and_its_group_but_plain_stop_does_not(fleet):
    live = first_generation(fleet)
    assert fleet.stop(fleet.supervisors[0]) == 0
    assert fleet.running() == live
    fleet.up("--interval", "60s")
    assert poll_for(lambda: fleet.log().count("adopted ") == 6, timeout=20), fleet.log()
    down = fleet.st2("down")
    assert down.returncode == 0, down.stderr
    assert f"stopped supervisor pid {fleet.supervisors[1].pid}" in down.stdout
    assert fleet.supervisors[1].wait(timeout=10) == 0
    for runtime_id, (pid, _) in live.items():
        assert observe(pid) is None, runtime_id
        assert not group_alive(pid), runtime_id
    assert fleet.running() == {}
    again = fleet.st2("down")
    assert again.returncode == 0 and again.stdout == ""        # idempotent
