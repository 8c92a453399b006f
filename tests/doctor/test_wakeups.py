"""Doctor names a DING notifier that would wake on its timer alone (no inotify instance of its
own and not registered with the seat host), and stays quiet for one that holds an instance."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import poll_for
from st2.doctor.wakeups import inotify_instances, wake_findings
from st2.process.identity import generation_id, observe
from st2.runtime import launch_record
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope

pytestmark = pytest.mark.process

HOLDS_INOTIFY = "from inotify_simple import INotify\nimport time\nwatch = INotify()\nprint('ready', flush=True)\ntime.sleep(60)\n"
HOLDS_NOTHING = "import time\nprint('ready', flush=True)\ntime.sleep(60)\n"


def record_ding(scope: RuntimeScope, pid: int) -> None:
    identity = observe(pid)
    launch_record.write(scope, LaunchRecord(
        runtime_id="h.one.ding", kind="exec", pid=pid, start_time=identity.start_time,
        created_at=identity.created_at, generation_id=generation_id("exec", "h.one.ding", identity),
        argv_digest=launch_record.argv_digest(["st2", "ding", "h.one"]), launched_at_ms=0, supervisor_pid=1))


@pytest.mark.parametrize("program, named", [(HOLDS_NOTHING, True), (HOLDS_INOTIFY, False)])
def test_a_notifier_without_inotify_or_a_seat_host_is_named_timer_only(tmp_path, monkeypatch, program, named):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    catalog = tmp_path / "catalog"
    (catalog / "agents" / "h" / "one").mkdir(parents=True)
    process = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "ready"
        scope = RuntimeScope(catalog, "h")
        scope.ensure()
        record_ding(scope, process.pid)
        poll_for(lambda: inotify_instances(process.pid) == (0 if named else 1), "the instance count", timeout=10)
        lines = [finding.line() for finding in wake_findings(catalog, "h", 0)]
        timer_only = (f"failure: h.one.ding: wake-timer-only: pid {process.pid} holds no inotify instance and is "
                      "not registered with the seat host: it wakes on its timer only")
        assert (timer_only in lines) is named, lines
        assert any(line.startswith("advisory: supervisor: seat-host: no seat host answers on ") for line in lines)
    finally:
        process.kill()
        process.wait()
