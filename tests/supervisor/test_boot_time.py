"""Supervised tasks stay themselves to every reader when the kernel's boot time has moved since the
user's st2 processes recorded theirs (a wall clock stepped by NTP, a virtual machine resumed):
the supervisor that launches and the CLI that reads reckon start times from one boot time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from support import REPO, boot_id, kernel_boot_time, poll_for, under_boot_time

from st2.runtime import launch_record

pytestmark = pytest.mark.process


def test_launched_tasks_read_as_running_when_the_kernels_boot_time_has_moved_since_it_was_recorded(fleet) -> None:
    moved = kernel_boot_time() - 1
    recorded = fleet.base / "boot-time"
    recorded.write_text(f"{boot_id()} {moved}\n")
    fleet.seat("one", '    argv "sleep" "600"\n    exec "worker" { argv "sleep" "600"; }')

    def st2(*words: str) -> list[str]:
        return under_boot_time(recorded, [sys.executable, "-m", "st2", *words])

    def tasks() -> dict | None:
        answer = subprocess.run(st2("tasks", "--json", "--host", fleet.host), env=fleet.env, cwd=REPO,
                                capture_output=True, text=True, timeout=60)
        rows = {row["runtimeId"]: row["runtime"] for row in json.loads(answer.stdout)["tasks"]}
        return rows if rows and all(runtime["state"] == "running" for runtime in rows.values()) else None

    supervisor = fleet.up("--interval", "60s", command=st2())
    try:
        rows = poll_for(tasks, "both tasks running to a reader", timeout=30)
        assert sorted(rows) == ["h.one", "h.one.worker"], fleet.log()
        for runtime_id, runtime in rows.items():
            record = launch_record.read(fleet.scope, runtime_id)
            with open(f"/proc/{record.pid}/stat", "rb") as handle:
                ticks = int(handle.read().rsplit(b")", 1)[1].split()[19])
            reckoned = moved + ticks / os.sysconf("SC_CLK_TCK")
            assert abs(record.start_time - reckoned) < 0.02, runtime_id
            assert runtime["createdAt"] == datetime.fromtimestamp(reckoned, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    finally:
        # This process reckons from the host's own shared boot time, not the moved one, so it
        # cannot prove these tasks its own: they are ended by their recorded process groups.
        supervisor.kill()
        supervisor.wait(timeout=10)
        for runtime_id in launch_record.recorded_ids(fleet.scope):
            record = launch_record.read(fleet.scope, runtime_id)
            if record is not None and record.socket is None:
                os.killpg(record.pid, signal.SIGKILL)
