"""The supervisor's short verbs load no psutil: ``st2 agent new``, ``up --once``, ``tasks`` and
``doctor`` run as short processes by the hundred (operators' scripts and timers, the
suite), and importing psutil costs ~20 ms of CPU a process, more than some of these verbs' own work.
psutil is loaded only where a process identity cannot come from ``/proc``, an exec task is
launched (:func:`st2.supervisor.backends.exec_backend.child_identity`) or a task's group is
killed (``down``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from support import modules_loaded_by, run_st2, st2_env

HEAVY = ("psutil",)


@pytest.mark.process
def test_authoring_launching_listing_and_checking_a_seat_load_no_psutil() -> None:
    place = Path(tempfile.mkdtemp(prefix="st2v-", dir="/tmp"))   # short: tmux sockets live below it
    catalog = place / "c"
    (catalog / "agents").mkdir(parents=True)
    env = st2_env(catalog, XDG_STATE_HOME=str(place / "s"))
    try:
        for words in (("agent", "new", "w", "--harness", "shell", "--host", "h"), ("up", "--once", "--host", "h"),
                      ("tasks", "--json", "--host", "h"), ("doctor", "--host", "h")):
            modules = modules_loaded_by(catalog, *words, env=env)
            assert [name for name in modules if name.startswith(HEAVY)] == [], words
        assert "h.w" in run_st2("tasks", "--json", "--host", "h", env=env).stdout   # up launched the seat
    finally:
        run_st2("down", "--host", "h", env=env)
        shutil.rmtree(place, ignore_errors=True)
