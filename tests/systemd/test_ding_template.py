"""The st2-ding@ template under a real (private) user manager: an instance named after a seat's
runtime id runs `st2 ding <runtime-id>` for that seat and keeps running while the seat's
session lives; an instance for a seat with no session exits."""

from __future__ import annotations

import psutil
import pytest

from deployment import ST2, Deployment
from private_manager import poll

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
    assert poll(lambda: manager.show("st2-ding@h.worker.service", "ActiveState")["ActiveState"] != "active", 5) is None
    assert f"--catalog {deployment.catalog} --host h ding h.worker" in manager.show(
        "st2-ding@h.worker.service", "ExecStart")["ExecStart"].replace("argv[]=" + ST2 + " ", "")


def test_a_ding_instance_for_a_seat_without_a_session_does_not_stay(manager) -> None:
    deployment = Deployment(manager)
    deployment.declare("worker", '    argv "sleep" "600"')
    deployment.install()
    manager.systemctl("start", "st2-ding@h.worker.service", check=False)
    # Its main process exits (the unit then rests, or waits out RestartSec if the exit counted
    # as a failure); either way no notifier stays attached to a seat that has no session.
    assert poll(lambda: manager.show("st2-ding@h.worker.service", "ExecMainExitTimestampMonotonic")
                ["ExecMainExitTimestampMonotonic"] != "0", 30)
