"""The st2-ding@ template under a real (private) user manager: an instance named after a seat's
runtime id runs `st2 ding <runtime-id>` for that seat and keeps running while the seat's
session lives; it leaves by itself once the seat is torn down, and an instance naming no
declared seat is refused."""

from __future__ import annotations

import psutil
import pytest

from deployment import ST2, Deployment
from support import poll_for
from support import run_st2

pytestmark = [pytest.mark.systemd, pytest.mark.process]


def test_a_ding_instance_starts_for_a_seat(manager) -> None:
    deployment = Deployment(manager)
    deployment.declare("worker", '    argv "sleep" "600"')
    deployment.install()
    manager.systemctl("start", "st2.service")
    deployment.running_tasks(["h.worker"])
    manager.systemctl("start", "st2-ding@h.worker.service")
    shown = manager.show("st2-ding@h.worker.service", "ActiveState", "SubState", "MainPID")
    assert (shown["ActiveState"], shown["SubState"]) == ("active", "running")
    assert psutil.Process(int(shown["MainPID"])).cmdline()[-2:] == ["ding", "h.worker"]
    # Still there a few seconds later: it found its seat's session and is watching the inbox.
    assert not poll_for(lambda: manager.show("st2-ding@h.worker.service", "ActiveState")["ActiveState"] != "active", timeout=5, step=0.1)
    assert f"--catalog {deployment.catalog} --host h ding h.worker" in manager.show(
        "st2-ding@h.worker.service", "ExecStart")["ExecStart"].replace("argv[]=" + ST2 + " ", "")


def test_a_ding_instance_leaves_once_its_seat_is_torn_down(manager) -> None:
    deployment = Deployment(manager)
    deployment.declare("worker", '    argv "sleep" "600"')
    deployment.install()
    # One pass, no supervisor left behind: nothing relaunches the seat after `st2 down`.
    assert run_st2("up", "--once", "--host", "h", env=deployment.environment()).returncode == 0
    deployment.running_tasks(["h.worker"])
    manager.systemctl("start", "st2-ding@h.worker.service")
    assert manager.show("st2-ding@h.worker.service", "SubState")["SubState"] == "running"
    result = run_st2("down", "--host", "h", "worker", env=deployment.environment())
    assert result.returncode == 0, result.stderr
    # The session is gone, so the notifier exits by itself, cleanly: the unit rests, no restart.
    assert poll_for(lambda: manager.show("st2-ding@h.worker.service", "ActiveState")["ActiveState"] == "inactive", timeout=30, step=0.1), \
        deployment.log("st2-ding@.service")
    assert manager.show("st2-ding@h.worker.service", "Result", "ExecMainStatus", "NRestarts") == {
        "Result": "success", "ExecMainStatus": "0", "NRestarts": "0"}


def test_a_ding_instance_for_an_undeclared_seat_is_refused(manager) -> None:
    deployment = Deployment(manager)
    deployment.install()
    manager.systemctl("start", "st2-ding@h.nobody.service", check=False)
    assert poll_for(lambda: manager.show("st2-ding@h.nobody.service", "ExecMainStatus")["ExecMainStatus"] not in ("", "0"), timeout=30, step=0.1)
    assert manager.show("st2-ding@h.nobody.service", "ExecMainStatus")["ExecMainStatus"] == "1"
    assert "no seat" in deployment.log("st2-ding@.service")
