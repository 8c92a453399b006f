from __future__ import annotations

import pytest
import os
import time



from support import poll_for
from st2.runtime import launch_record
from st2.supervisor.backends.backend import RuntimeState, TaskSpec
from st2.process.identity import observe
from st2.supervisor.backends.process_group import group_alive, reap_children

pytestmark = pytest.mark.process


def test_exec_task_runs_in_its_own_session_and_group_with_a_record(exec_backend, scope, launched):
    record = exec_backend.launch(TaskSpec("h.a", "exec", ("sleep", "30")))
    launched.append(record)
    assert os.getpgid(record.pid) == record.pid != os.getpgid(0)
    assert os.getsid(record.pid) == record.pid != os.getsid(0)
    assert launch_record.read(scope, "h.a") == record
    assert exec_backend.observe(record).state is RuntimeState.RUNNING


def test_exec_kill_reaps_the_whole_process_group_not_just_the_leader(exec_backend, short_dir, launched):
    marker = short_dir / "child.pid"
    script = f"sleep 60 & echo $! > {marker}; wait"
    record = exec_backend.launch(TaskSpec("h.g", "exec", ("sh", "-c", script)))
    launched.append(record)
    assert poll_for(lambda: marker.exists() and marker.read_text().strip())
    child = int(marker.read_text())
    assert observe(child) is not None and os.getpgid(child) == record.pid
    exec_backend.kill(record)
    assert not group_alive(record.pid)
    assert observe(child) is None


def test_exec_restart_keeps_exactly_one_prior_log_generation(exec_backend, scope, launched):
    logs = scope.catalog / "logs"
    for word in ("first", "second", "third"):
        record = exec_backend.launch(TaskSpec("h.l", "exec", ("sh", "-c", f"echo {word}")))
        launched.append(record)
        assert poll_for(lambda: (logs / "h.l.log").read_text() == f"{word}\n")
        assert poll_for(lambda: (reap_children() or True) and exec_backend.observe(record).state is RuntimeState.EXITED)
    assert sorted(path.name for path in logs.iterdir()) == ["h.l.log", "h.l.log.1"]
    assert (logs / "h.l.log.1").read_text() == "second\n"


def test_an_exited_task_observes_exited_and_a_live_one_running(exec_backend, launched):
    quick = exec_backend.launch(TaskSpec("h.q", "exec", ("true",)))
    slow = exec_backend.launch(TaskSpec("h.s", "exec", ("sleep", "30")))
    launched.extend([quick, slow])
    assert poll_for(lambda: (reap_children() or True) and exec_backend.observe(quick).state is RuntimeState.EXITED)
    assert exec_backend.observe(slow).state is RuntimeState.RUNNING


def test_a_reused_pid_with_a_different_start_time_is_not_adopted(exec_backend, launched):
    record = exec_backend.launch(TaskSpec("h.r", "exec", ("sleep", "30")))
    launched.append(record)
    # The same PID, alive, but the record claims an earlier start: another process now owns it.
    from dataclasses import replace

    forged = replace(record, start_time=record.start_time - 100.0)
    observation = exec_backend.observe(forged)
    assert observation.state is RuntimeState.INDETERMINATE
    assert observation.pid_reused
    assert "PID reused" in observation.error
    # Killing through the forged record must not touch the live process that owns the PID now.
    exec_backend.kill(forged)
    assert observe(record.pid) is not None
