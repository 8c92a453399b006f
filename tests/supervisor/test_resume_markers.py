"""``st2 down`` leaves the durable stop marker that makes the next launch start fresh, and
``st2 up --resume`` removes it (issue 24); the markers live in the session store beside the
runtime scope, so removing the scope (a simulated reboot) keeps them."""

from __future__ import annotations

import shutil

import pytest

from st2.runtime import resumable_session

pytestmark = pytest.mark.process


def store(fleet) -> resumable_session.SessionStore:
    return resumable_session.SessionStore.of(fleet.catalog, "h", fleet.state / "st2")


def test_st2_down_marks_a_running_seat_and_the_marker_survives_a_reboot(fleet) -> None:
    fleet.seat("w", '    argv "sleep" "600"')
    assert fleet.st2("up", "--once").returncode == 0
    assert set(fleet.running()) == {"h.w"}
    result = fleet.st2("down", "w")
    assert result.returncode == 0, result.stderr
    assert resumable_session.stopped_ids(store(fleet)) == ["h.w"]
    marker = store(fleet).stop_marker("h.w").read_text()
    assert marker.startswith('{"schema":"st2.session-stop.v1","runtimeId":"h.w","stoppedAtMs":')
    shutil.rmtree(fleet.scope.directory)  # the runtime scope goes; the stop stays
    assert resumable_session.stopped_ids(store(fleet)) == ["h.w"]


def test_st2_up_resume_removes_only_the_selected_markers(fleet) -> None:
    fleet.seat("w", '    argv "sleep" "600"')
    fleet.seat("v", '    argv "sleep" "600"')
    assert fleet.st2("down", "w").returncode == 0  # nothing runs: the declared seat is marked
    assert fleet.st2("down", "v").returncode == 0
    assert resumable_session.stopped_ids(store(fleet)) == ["h.v", "h.w"]
    assert fleet.st2("up", "--materialize-only").returncode == 0
    assert resumable_session.stopped_ids(store(fleet)) == ["h.v", "h.w"]  # plain up keeps them
    assert fleet.st2("up", "--resume", "--agent", "w", "--materialize-only").returncode == 0
    assert resumable_session.stopped_ids(store(fleet)) == ["h.v"]
    assert fleet.st2("up", "--resume", "--materialize-only").returncode == 0
    assert resumable_session.stopped_ids(store(fleet)) == []
