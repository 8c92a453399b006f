"""Crash loops surface, parks are visible and individually recoverable (process tier)."""

from __future__ import annotations

import json

import pytest

from supervisor_support import poll_for

pytestmark = pytest.mark.process

FAIL_POLICY = 'restart { attempts 2; interval "60s"; mode "fail"; }'


def crashing_seat(fleet, identity: str) -> None:
    fixed = fleet.base / f"{identity}.fixed"
    script = f"test -f {fixed} && exec sleep 600; exit 3"
    fleet.seat(identity, f'''    supervisor "lead"
    {FAIL_POLICY}
    argv "sleep" "600"
    exec "job" {{ argv "sh" "-c" "{script}"; }}''')


def inbox(fleet, identity: str) -> list[str]:
    directory = fleet.catalog / "agents" / "h" / identity / "resources" / "inbox"
    return sorted(path.read_text() for path in directory.glob("*.md")) if directory.exists() else []


def parked_rows(fleet) -> dict:
    return {row["runtimeId"]: row for row in fleet.tasks()["tasks"] if row["parked"]}


def test_fail_mode_parks_notifies_once_and_unpark_recovers_exactly_that_task(fleet, listener):
    fleet.seat("lead", '    argv "sleep" "600"')
    crashing_seat(fleet, "flaky")
    crashing_seat(fleet, "other")
    fleet.up("--interval", "1s")
    assert poll_for(lambda: len(parked_rows(fleet)) == 2, timeout=20), fleet.log()
    healthy = {rid: value for rid, value in fleet.running().items()}
    assert sorted(healthy) == ["h.flaky", "h.lead", "h.other"]

    # Parked: reported beside the true runtime state, with the exact recovery argv.
    inventory = fleet.tasks()
    assert inventory["complete"] is True, inventory
    row = parked_rows(fleet)["h.flaky.job"]
    assert row["runtime"]["state"] == "exited"
    assert row["parked"]["recovery"] == ["st2", "unpark", "--catalog", str(fleet.catalog), "--host", "h", "h.flaky.job"]
    assert row["parked"]["supervisorPid"] == fleet.supervisors[0].pid
    assert "GAVE UP on h.flaky.job" in fleet.log()
    # 1 launch + 2 restarts, then parked: exactly attempts + 1 runs.
    assert fleet.log().count("h.flaky.job[") == 3, fleet.log()

    # Exactly one crash-loop message per parked task reaches the supervisor agent, over passes.
    assert poll_for(lambda: len(inbox(fleet, "lead")) == 2, timeout=10)
    passes_before = fleet.log().count("adopted")
    passes = listener.passes()
    assert poll_for(lambda: listener.passes() >= passes + 3, timeout=20)   # a few 1 s passes go by
    messages = inbox(fleet, "lead")
    assert len(messages) == 2, messages
    assert sum("subject: crash-loop: h.flaky.job parked" in message for message in messages) == 1
    assert fleet.log().count("adopted") == passes_before
    assert fleet.running() == healthy               # no healthy peer was restarted

    # Fix one cause and unpark exactly that task.
    (fleet.base / "flaky.fixed").write_text("")
    result = fleet.st2("unpark", "h.flaky.job")
    assert result.returncode == 0, result.stderr
    recovered = poll_for(lambda: fleet.running().get("h.flaky.job"), timeout=10)
    assert recovered, fleet.log()
    passes = listener.passes()
    assert poll_for(lambda: listener.passes() >= passes + 3, timeout=20)   # past the 1 s interval several times
    assert fleet.running().get("h.flaky.job") == recovered
    assert sorted(parked_rows(fleet)) == ["h.other.job"]     # the other park is untouched
    assert {rid: value for rid, value in fleet.running().items() if rid in healthy} == healthy
    assert len(inbox(fleet, "lead")) == 2


def test_unpark_of_a_task_that_is_not_parked_is_refused(fleet):
    fleet.seat("lead", '    argv "sleep" "600"')
    result = fleet.st2("unpark", "h.lead")
    assert result.returncode == 1
    assert "is not parked" in result.stderr


def test_delay_mode_keeps_restarting_and_never_parks(fleet):
    fleet.seat("steady", '''    restart { attempts 1; interval "2s"; mode "delay"; }
    argv "sleep" "600"
    exec "job" { argv "sh" "-c" "exit 3"; }''')
    fleet.up("--interval", "1s")
    # Two runs inside the first window, then a wait until the window frees, then more runs.
    assert poll_for(lambda: fleet.log().count("h.steady.job[") >= 3, timeout=15), fleet.log()
    assert "GAVE UP" not in fleet.log()
    assert not fleet.scope.park_marker("h.steady.job").exists()
    assert parked_rows(fleet) == {}


def test_a_park_marker_of_a_supervisor_that_is_gone_reads_as_not_parked(fleet):
    fleet.seat("lead", '    argv "sleep" "600"')
    crashing_seat(fleet, "flaky")
    first = fleet.up("--interval", "1s")
    assert poll_for(lambda: "h.flaky.job" in parked_rows(fleet), timeout=20), fleet.log()
    fleet.stop(first)
    marker = json.loads(fleet.scope.park_marker("h.flaky.job").read_text())
    assert marker["supervisorPid"] == first.pid
    inventory = fleet.tasks()
    assert parked_rows(fleet) == {} and inventory["complete"] is True


def test_a_crash_looping_pty_task_is_seen_at_once_not_at_the_interval(fleet):
    # The pane is not the supervisor's child and tmux leaves its socket behind, so only the
    # pidfd wake-up can notice these exits before the 60 s interval.
    fleet.seat("lead", '    argv "sleep" "600"')
    fleet.seat("flaky", f'''    supervisor "lead"
    restart {{ attempts 2; interval "60s"; mode "fail"; }}
    argv "sh" "-c" "sleep 0.5; exit 3"''')
    fleet.up("--interval", "60s")
    assert poll_for(lambda: "h.flaky" in parked_rows(fleet), timeout=15), fleet.log()
    assert poll_for(lambda: len(inbox(fleet, "lead")) == 1, timeout=10)
    assert "h.lead" in fleet.running()


def test_an_adopted_exec_task_that_exits_is_restarted_without_waiting_for_the_interval(fleet):
    marker = fleet.base / "stop-now"
    fleet.seat("one", f'''    argv "sleep" "600"
    exec "job" {{ argv "sh" "-c" "while ! test -f {marker}; do sleep 0.1; done; rm {marker}"; }}''')
    first = fleet.up("--interval", "60s")
    assert poll_for(lambda: len(fleet.running()) == 2, timeout=20), fleet.log()
    fleet.stop(first)
    fleet.up("--interval", "60s")            # the job is now adopted: not this supervisor's child
    assert poll_for(lambda: fleet.log().count("adopted ") == 2, timeout=20), fleet.log()
    old = fleet.running()["h.one.job"]
    marker.write_text("")
    assert poll_for(lambda: fleet.running().get("h.one.job") not in (None, old), timeout=30), fleet.log()
    # The launch record is written before the pass prints its summary: wait for the line too.
    assert poll_for(lambda: "restarted h.one.job" in fleet.log(), timeout=10), fleet.log()


def test_two_catalogs_on_one_host_stay_isolated_and_recovery_ignores_ambient_defaults(fleet):
    import shutil
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from supervisor_support import REPO, Fleet, RuntimeScope

    other = Fleet(Path(tempfile.mkdtemp(dir="/tmp", prefix="st2p-")))
    # One host, one runtime state home: only the catalog tells the two fleets apart.
    other.state = fleet.state
    other.env["XDG_STATE_HOME"] = str(fleet.state)
    other.scope = RuntimeScope(other.catalog, "h", state_dir=fleet.state / "st2")
    try:
        for group in (fleet, other):
            group.seat("lead", '    argv "sleep" "600"')
            crashing_seat(group, "flaky")                # the same runtime id in both catalogs
            group.up("--interval", "1s")
        for group in (fleet, other):
            assert poll_for(lambda: "h.flaky.job" in parked_rows(group), timeout=20), group.log()
        mine, theirs = parked_rows(fleet)["h.flaky.job"], parked_rows(other)["h.flaky.job"]
        assert mine["parked"]["supervisorPid"] == fleet.supervisors[0].pid
        assert theirs["parked"]["supervisorPid"] == other.supervisors[0].pid
        assert fleet.scope.park_marker("h.flaky.job") != other.scope.park_marker("h.flaky.job")

        # The projected recovery argv, run where every default points at the other catalog and
        # another host, recovers exactly this catalog's task.
        (fleet.base / "flaky.fixed").write_text("")
        ambient = dict(other.env, CATALOG=str(other.catalog), ST2_HOST="elsewhere")
        recovery = mine["parked"]["recovery"]
        assert recovery == ["st2", "unpark", "--catalog", str(fleet.catalog), "--host", "h", "h.flaky.job"]
        result = subprocess.run([sys.executable, "-m", "st2", *recovery[1:]], env=ambient, cwd=REPO,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        assert poll_for(lambda: fleet.running().get("h.flaky.job"), timeout=15), fleet.log()
        assert "h.flaky.job" not in parked_rows(fleet)
        assert "h.flaky.job" in parked_rows(other) and other.scope.park_marker("h.flaky.job").exists()
        assert "h.flaky.job" not in other.running()
        # Each inventory lists only its own catalog's tasks and parks.
        assert all(row["parked"] is None or row["parked"]["recovery"][3] == str(other.catalog)
                   for row in other.tasks()["tasks"])
    finally:
        other.cleanup()
        shutil.rmtree(other.base, ignore_errors=True)
