"""st2.service under a real (private) user manager: READY through sd_notify with a STATUS, the
watchdog restarting a hung supervisor, and `systemctl --user stop st2` leaving every agent task
running. Each behaviour has its non-firing twin, so each test can tell the difference."""

from __future__ import annotations

import os
import signal

import psutil
import pytest

from deployment import HOST, ST2, Deployment, alive
from support import poll_for
from support import run_st2

pytestmark = [pytest.mark.systemd, pytest.mark.process]

SEAT = '    argv "sleep" "600"\n    exec "watch" { argv "sleep" "600"; }'
TASKS = ["h.worker", "h.worker.watch"]


@pytest.fixture
def deployment(manager) -> Deployment:
    deployed = Deployment(manager)
    deployed.declare("worker", SEAT)
    deployed.install()
    return deployed


def test_the_supervisor_unit_runs_with_the_shipped_survival_settings(deployment: Deployment) -> None:
    deployment.manager.systemctl("start", "st2.service")  # WatchdogUSec is reported once running
    shown = deployment.manager.show("st2.service", "Type", "NotifyAccess", "KillMode", "Restart", "WatchdogUSec",
                                    "MemoryMax", "LoadState")
    assert shown == {"Type": "notify", "NotifyAccess": "main", "KillMode": "process", "Restart": "on-failure",
                     "WatchdogUSec": "1min", "MemoryMax": str(512 * 1024 * 1024), "LoadState": "loaded"}


def test_st2_service_reaches_ready_through_sd_notify_and_reports_status(deployment: Deployment) -> None:
    manager = deployment.manager
    manager.systemctl("start", "st2.service")  # Type=notify: returns once READY=1 arrived
    shown = manager.show("st2.service", "ActiveState", "SubState", "StatusText", "MainPID")
    assert (shown["ActiveState"], shown["SubState"]) == ("active", "running")
    assert shown["StatusText"].startswith("pass 1: running=")
    assert psutil.Process(int(shown["MainPID"])).cmdline()[-1] == "up"


def test_without_the_notify_socket_the_same_supervisor_never_becomes_ready(deployment: Deployment) -> None:
    manager = deployment.manager
    manager.drop_in("st2.service", "no-notify", (
        "[Service]\nTimeoutStartSec=4s\nRestart=no\nExecStart=\n"
        f"ExecStart=/usr/bin/env -u NOTIFY_SOCKET {_exec_start(deployment)}\n"
    ))
    deployment.reload()
    started = manager.systemctl("start", "st2.service", check=False)
    assert started.returncode != 0
    shown = manager.show("st2.service", "ActiveState", "Result", "StatusText")
    assert shown["ActiveState"] == "failed"
    assert shown["Result"] == "timeout"
    assert shown["StatusText"] == ""


def _exec_start(deployment: Deployment) -> str:
    unit = (deployment.manager.unit_directory / "st2.service").read_text()
    return next(line for line in unit.splitlines() if line.startswith("ExecStart=")).removeprefix("ExecStart=")


def watchdog_drop_in(deployment: Deployment) -> None:
    deployment.manager.drop_in("st2.service", "fast-watchdog",
                               "[Service]\nWatchdogSec=3s\nTimeoutAbortSec=2s\nRestartSec=500ms\n")
    deployment.reload()


def test_the_watchdog_restarts_a_hung_supervisor(deployment: Deployment) -> None:
    manager = deployment.manager
    watchdog_drop_in(deployment)
    manager.systemctl("start", "st2.service")
    first = int(manager.show("st2.service", "MainPID")["MainPID"])
    os.kill(first, signal.SIGSTOP)  # hung: alive, but its loop no longer pings WATCHDOG=1

    def restarted():
        shown = manager.show("st2.service", "MainPID", "NRestarts", "ActiveState")
        return shown if shown["NRestarts"] == "1" and shown["ActiveState"] == "active" and int(shown["MainPID"]) not in (0, first) else None

    shown = poll_for(restarted, timeout=30, step=0.2)
    assert shown, manager.show("st2.service", "MainPID", "NRestarts", "ActiveState", "Result")
    assert not psutil.pid_exists(first) or psutil.Process(first).status() == psutil.STATUS_ZOMBIE


def test_a_supervisor_that_keeps_pinging_is_left_alone(deployment: Deployment) -> None:
    manager = deployment.manager
    watchdog_drop_in(deployment)
    manager.systemctl("start", "st2.service")
    first = manager.show("st2.service", "MainPID")["MainPID"]
    # Three watchdog periods: a supervisor that did not ping would have been aborted by now.
    assert not poll_for(lambda: manager.show("st2.service", "NRestarts")["NRestarts"] != "0", timeout=9, step=0.2)
    assert manager.show("st2.service", "MainPID", "NRestarts", "ActiveState") == {
        "MainPID": first, "NRestarts": "0", "ActiveState": "active"}


@pytest.mark.parametrize(
    ("transport", "kill_mode", "survive"),
    [
        ("shipped", "shipped", True),                 # scopes + KillMode=process
        ("setsid", "shipped", True),                  # no scopes: KillMode=process alone still spares them
        ("systemd", "control-group", True),           # scopes alone: the unit's cgroup holds no task
        ("setsid", "control-group", False),           # the twin: tasks in the unit's cgroup, killed with it
    ],
)
def test_stopping_st2_service_leaves_every_task_running(deployment: Deployment, transport: str, kill_mode: str,
                                                        survive: bool) -> None:
    manager = deployment.manager
    settings = ""
    if transport != "shipped":
        settings += f"Environment=ST2_TRANSPORT={transport}\n"
    if kill_mode != "shipped":
        settings += f"KillMode={kill_mode}\n"
    if settings:
        manager.drop_in("st2.service", "mutation", "[Service]\n" + settings)
        deployment.reload()
    manager.systemctl("start", "st2.service")
    supervisor = int(manager.show("st2.service", "MainPID")["MainPID"])
    tasks = deployment.running_tasks(TASKS)
    unit_cgroup = manager.cgroup_of(supervisor)
    for process in tasks.values():
        in_own_scope = manager.cgroup_of(process.pid).split("/")[-1].startswith("st2-task-")
        assert in_own_scope == (transport in ("shipped", "systemd")), manager.cgroup_of(process.pid)
        assert (manager.cgroup_of(process.pid) == unit_cgroup) == (transport == "setsid")

    manager.systemctl("stop", "st2.service")
    assert poll_for(lambda: not psutil.pid_exists(supervisor), timeout=15, step=0.1)
    if survive:
        assert not poll_for(lambda: not all(alive(process) for process in tasks.values()), timeout=2, step=0.1)
        assert all(alive(process) for process in tasks.values())
    else:
        assert poll_for(lambda: not any(alive(process) for process in tasks.values()), timeout=15, step=0.1)


def test_service_install_enable_starts_the_supervisor_and_the_poll_timer(deployment: Deployment) -> None:
    manager = deployment.manager
    result = run_st2("service", "install", "--catalog", str(deployment.catalog), "--host", HOST, "--st2", ST2,
                     "--unit-dir", str(manager.unit_directory), "--enable", env=deployment.environment())
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "enabled st2.service st2-usage-poll.timer"
    assert manager.show("st2.service", "ActiveState", "UnitFileState") == {"ActiveState": "active", "UnitFileState": "enabled"}
    assert manager.show("st2-usage-poll.timer", "ActiveState", "UnitFileState") == {"ActiveState": "active", "UnitFileState": "enabled"}
