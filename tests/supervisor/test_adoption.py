"""PID reuse, socket admission and the task inventory wire shape (process tier)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import replace

import pytest

from supervisor_support import RuntimeScope, poll_for
from st2.runtime import launch_record
from st2.process.identity import observe
from st2.supervisor.backends.backend import RuntimeState, TaskSpec
from st2.supervisor.backends.exec_backend import ExecBackend
from st2.supervisor.backends.process_group import kill_group, reap_children
from st2.runtime.scope import SUN_PATH_BYTES

pytestmark = pytest.mark.process


@pytest.fixture
def stranger():
    """A live process that is not ours to adopt (stands in for whoever got the reused PID)."""
    process = subprocess.Popen(["sleep", "600"], start_new_session=True)
    yield process
    kill_group(observe(process.pid) or replace_identity(process.pid), grace_seconds=1)
    process.wait(timeout=10)


def replace_identity(pid):
    from st2.process.identity import ProcessIdentity

    return ProcessIdentity(pid, 0.0)


@pytest.mark.parametrize("kind", ["exec", "pty"])
def test_a_record_whose_pid_now_belongs_to_another_process_is_not_adopted(fleet, stranger, kind):
    fleet.seat("one", '    argv "sleep" "600"\n    exec "worker" { argv "sleep" "600"; }')
    assert fleet.st2("up", "--once").returncode == 0
    runtime_id = "h.one" if kind == "pty" else "h.one.worker"
    genuine = fleet.record(runtime_id)
    fleet.st2("down")
    # The record now names the stranger's PID with the old generation's start time.
    forged = replace(genuine, pid=stranger.pid)
    launch_record.write(fleet.scope, forged)
    result = fleet.st2("up", "--once")
    assert f"{runtime_id}: not adopted: {runtime_id}: pid {stranger.pid} now belongs to another process (PID reused)" in result.stderr
    replacement = fleet.record(runtime_id)
    assert replacement.pid != stranger.pid
    assert observe(replacement.pid) is not None
    assert observe(stranger.pid) is not None          # never adopted, never killed
    assert fleet.st2("down").returncode == 0
    assert observe(stranger.pid) is not None


def test_the_inventory_is_incomplete_while_a_record_names_a_reused_pid(fleet, stranger):
    fleet.seat("one", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    record = fleet.record("h.one")
    launch_record.write(fleet.scope, replace(record, pid=stranger.pid))
    result = fleet.st2("tasks", "--json")
    assert result.returncode == 1
    assert '"complete":false' in result.stdout and "PID reused" in result.stdout
    launch_record.write(fleet.scope, record)
    assert fleet.st2("tasks", "--json").returncode == 0


def test_an_over_long_socket_path_is_refused_at_admission_naming_path_and_overage(fleet):
    deep_state = fleet.base / ("d" * 64)
    fleet.env["XDG_STATE_HOME"] = str(deep_state)
    fleet.seat("agent-with-a-name", '    argv "sleep" "600"\n    ding')
    scope = RuntimeScope(fleet.catalog, "h", state_dir=deep_state / "st2")
    path = scope.socket("h.agent-with-a-name")
    overage = len(os.fsencode(str(path))) + 1 - SUN_PATH_BYTES
    assert overage > 0
    result = fleet.st2("up", "--once")
    assert result.returncode == 1
    assert f"h.agent-with-a-name: refused at admission: session socket path {path} is" in result.stderr
    assert f"by {overage} bytes" in result.stderr
    assert launch_record.recorded_ids(scope) == []    # nothing launched, not even the DING
    assert not path.exists()


def test_another_hosts_seats_are_not_judged_against_this_hosts_root(fleet):
    fleet.seat("short", '    argv "sleep" "600"')
    long_identity = "x" * 64                    # the longest name the grammar admits
    fleet.seat(long_identity, '    argv "sleep" "600"', host="elsewhere")
    # Judged against this host's root it could never bind; it is another host's, so it is not judged.
    assert fleet.scope.socket_admission_error(f"elsewhere.{long_identity}") is not None
    result = fleet.st2("up", "--once")
    assert result.returncode == 0, result.stderr
    assert "admission" not in result.stderr
    assert sorted(fleet.running()) == ["h.short"]


def test_task_inventory_wire_shape_is_pinned(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"')
    fleet.seat("beta", '    desired-state "suspended" reason="waiting for CI"\n    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    record = fleet.record("h.alpha")
    result = fleet.st2("tasks", "--json")
    assert result.returncode == 0
    assert result.stdout == (
        '{"schema":"st2.task-inventory.v1","catalog":"%s","host":"h","complete":true,"errors":[],"tasks":['
        '{"agent":"h.alpha","task":"agent","runtimeId":"h.alpha","kind":"pty","lifecycle":"service",'
        '"retired":false,"desiredState":"running","agentDesiredState":"running","agentDesiredStateReason":null,'
        '"runtime":{"state":"running","pid":%d,"createdAt":"%s","generationId":"%s","error":null},"parked":null,"admission":null},'
        '{"agent":"h.beta","task":"agent","runtimeId":"h.beta","kind":"pty","lifecycle":"service",'
        '"retired":false,"desiredState":"absent","agentDesiredState":"suspended","agentDesiredStateReason":"waiting for CI",'
        '"runtime":{"state":"absent","pid":null,"createdAt":null,"generationId":null,"error":null},"parked":null,"admission":null}]}\n'
        % (fleet.catalog, record.pid, record.created_at, record.generation_id)
    )


def test_malformed_evidence_makes_the_inventory_incomplete_and_exit_non_zero(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"')
    fleet.scope.ensure()
    fleet.scope.launch_record("h.alpha").write_text("{not json")
    result = fleet.st2("tasks", "--json")
    assert result.returncode == 1
    assert result.stdout == (
        '{"schema":"st2.task-inventory.v1","catalog":"%s","host":"h","complete":false,'
        '"errors":["launch record for h.alpha is not JSON"],"tasks":['
        '{"agent":"h.alpha","task":"agent","runtimeId":"h.alpha","kind":"pty","lifecycle":"service",'
        '"retired":false,"desiredState":"running","agentDesiredState":"running","agentDesiredStateReason":null,'
        '"runtime":{"state":"indeterminate","pid":null,"createdAt":null,"generationId":null,'
        '"error":"launch record for h.alpha is not JSON"},"parked":null,"admission":null}]}\n' % fleet.catalog
    )
    # And the supervisor holds that task rather than risk a duplicate.
    up = fleet.st2("up", "--once")
    assert "h.alpha: holding, not launching: launch record for h.alpha is not JSON" in up.stderr


def test_the_inventory_never_creates_missing_roots(fleet):
    fleet.seat("alpha", '    argv "sleep" "600"')
    result = fleet.st2("tasks", "--json")
    assert result.returncode == 0
    assert '"state":"absent"' in result.stdout
    assert not fleet.state.exists()
    missing = fleet.st2("tasks", "--json", "--catalog", str(fleet.base / "nowhere"))
    assert missing.returncode == 1 and '"complete":false' in missing.stdout
    assert not (fleet.base / "nowhere").exists()


def test_every_launched_task_carries_the_runner_owned_environment(fleet):
    fleet.seat("one", '    argv "sleep" "600"\n    env { ST_AGENT "h.one"; EXTRA "kept"; }\n'
               '    exec "worker" { argv "sleep" "600"; }')
    assert fleet.st2("up", "--once").returncode == 0
    for runtime_id in ("h.one", "h.one.worker"):
        pid = fleet.record(runtime_id).pid
        raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
        environment = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
        assert environment["ST_AGENT"] == "h.one", runtime_id
        assert environment["CATALOG"] == environment["ST_ROOT"] == str(fleet.catalog)
        assert environment["ST_HOOKS"] and environment["EXTRA"] == "kept"
        assert "NOTIFY_SOCKET" not in environment


def _environ(pid: int) -> dict[str, str]:
    raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.parametrize("form", ["compact", "explicit"])
def test_pty_metadata_is_form_equivalent_and_role_scoped_and_a_dead_task_replay_keeps_st_agent(fleet, form):
    agent = ('    argv "sleep" "600"' if form == "compact"
             else '    pty "agent" { id "h.one"; argv "sleep" "600"; }')
    seat = fleet.seat("one", agent + '\n    pty "side" { argv "sleep" "600"; }\n'
                      '    exec "worker" { argv "sleep" "600"; env { ST_ROLE "agent"; ST_ACTOR_PATH "/elsewhere"; }; }')
    # The supervisor's own environment claims a role: no task inherits it.
    fleet.env.update(ST_ROLE="agent", ST_ACTOR_PATH="/inherited")
    assert fleet.st2("up", "--once").returncode == 0
    expected = {"h.one": (str(seat), "agent"), "h.one.side": (str(seat), None), "h.one.worker": (None, None)}
    for runtime_id, (actor_path, role) in expected.items():
        environment = _environ(fleet.record(runtime_id).pid)
        assert (environment.get("ST_ACTOR_PATH"), environment.get("ST_ROLE")) == (actor_path, role), runtime_id
        assert environment["ST_AGENT"] == "h.one", runtime_id
    # A dead task is replayed with its runner-owned identity: ST_AGENT (and the PTY metadata) kept.
    for runtime_id in ("h.one", "h.one.worker"):
        before = fleet.record(runtime_id).pid
        os.kill(before, signal.SIGKILL)
        assert poll_for(lambda: observe(before) is None, timeout=10)
        assert fleet.st2("up", "--once").returncode == 0
        after = fleet.record(runtime_id).pid
        assert after != before
        environment = _environ(after)
        assert environment["ST_AGENT"] == "h.one", runtime_id
        assert (environment.get("ST_ACTOR_PATH"), environment.get("ST_ROLE")) == expected[runtime_id], runtime_id


def test_st2_up_adopts_a_hand_started_adopt_only_task_and_never_starts_or_restarts_it(fleet):
    fleet.seat("one", '    argv "sleep" "600"\n    exec "side" { argv "sleep" "600"; lifecycle "adopt-only"; }')
    assert fleet.st2("up", "--once").returncode == 0
    assert sorted(fleet.running()) == ["h.one"] and fleet.record("h.one.side") is None   # never started
    # Started outside st2, through the exec backend, so its launch record is the one st2 writes.
    backend = ExecBackend(fleet.scope, fleet.catalog / "logs")
    record = backend.launch(TaskSpec("h.one.side", "exec", ("sleep", "600")))
    adopting = fleet.st2("up", "--once")
    assert adopting.returncode == 0 and "adopted h.one.side" in adopting.stderr
    assert fleet.running()["h.one.side"] == (record.pid, record.start_time)
    os.kill(record.pid, signal.SIGKILL)
    assert poll_for(lambda: (reap_children() or True) and backend.observe(record).state is RuntimeState.EXITED)
    for _ in range(2):
        again = fleet.st2("up", "--once")
        assert again.returncode == 0, again.stderr
        assert "h.one.side" not in again.stderr and fleet.record("h.one.side") == record   # not relaunched
    assert not fleet.scope.park_marker("h.one.side").exists()
    result = fleet.st2("tasks", "--json")
    row = next(row for row in json.loads(result.stdout)["tasks"] if row["runtimeId"] == "h.one.side")
    assert result.returncode == 0 and json.dumps(row, separators=(",", ":")) == (
        '{"agent":"h.one","task":"side","runtimeId":"h.one.side","kind":"exec","lifecycle":"adopt-only",'
        '"retired":false,"desiredState":"running","agentDesiredState":"running","agentDesiredStateReason":null,'
        '"runtime":{"state":"exited","pid":null,"createdAt":null,"generationId":null,"error":null},"parked":null,"admission":null}')
