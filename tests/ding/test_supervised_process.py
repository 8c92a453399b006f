"""DING as the supervisor runs it: ``st2 up`` launches the seat's derived ``<host>.<identity>.ding``
task next to its PTY task, restarts it after every SIGKILL, and each notice still lands once."""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ding_support import STANDIN, poll_for, runs_on, typed_notice, write_message
from st2.ding.notice import PASTE_END, PASTE_START
from supervisor_support import Fleet

pytestmark = pytest.mark.process


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2dg-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    shutil.rmtree(base, ignore_errors=True)


def test_supervisor_restarts_a_killed_notifier_and_every_notice_lands_once(fleet):
    logs = fleet.base / "standin"
    logs.mkdir()
    argv = " ".join(f'"{word}"' for word in (sys.executable, str(STANDIN), "--bytes", str(logs / "bytes"),
                                             "--events", str(logs / "events")))
    seat = fleet.seat("builder", f"    argv {argv}\n    ding\n    restart {{\n        attempts 50\n    }}")
    (seat / "resources" / "inbox").mkdir(parents=True)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"   # the supervised notifier logs its passes
    supervisor = fleet.up("--interval", "1s")
    try:
        def ding_pid():
            record = fleet.running().get("h.builder.ding")
            return record[0] if record else None

        poll_for(lambda: ding_pid() and "h.builder" in fleet.running(), timeout=30, what="seat and notifier")
        poll_for(lambda: (fleet.scope.directory / "ding" / "h.builder.json").exists(), timeout=20, what='(fleet.scope.directory / "ding" / "h.builder.json").exists()')
        generator = random.Random(7)
        notices = []
        for round_number in range(5):
            subject = f"round {round_number}"
            notices.append(typed_notice(write_message(seat, subject), subject, "h.planner"))
            time.sleep(generator.uniform(0.0, 0.3))
            victim = ding_pid()
            os.killpg(victim, signal.SIGKILL)
            poll_for(lambda: ding_pid() not in (None, victim), timeout=30, what="the supervisor's restart")
        events = logs / "events"
        poll_for(lambda: events.read_text().count("submit\t") >= len(notices), timeout=40,
                 what="every notice after the last restart")
        runs_on(fleet.catalog / "logs" / "h.builder.ding.log", passes=3)  # anything extra would show up now
        submitted = [line.split("\t", 1)[1] for line in events.read_text().splitlines() if line.startswith("submit")]
        assert submitted == [repr(notice) for notice in notices]
        received = (logs / "bytes").read_bytes()
        for notice in notices:
            assert received.count((PASTE_START + notice + PASTE_END).encode()) == 1
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
