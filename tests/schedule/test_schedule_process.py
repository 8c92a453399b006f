"""Scheduled prompts under a real ``st2 up``: an overdue schedule is caught up once, and a
supervisor SIGKILLed around the post and started again never posts that slot a second time."""

from __future__ import annotations

import signal
import time

import pytest

from supervisor_support import poll_for, temporary_fleet
from st2.bus.mailbox import list_inbox
from st2.runtime.resumable_session import SessionStore
from st2.schedule import state

pytestmark = pytest.mark.process

HOUR = 3_600_000
WORK = '    exec "work" { argv "sleep" "3600" }\n    schedule "daily" { every "1h"; prompt "summarize the day" }'


def test_a_restarted_supervisor_never_posts_a_slot_twice() -> None:
    with temporary_fleet("st2sch-") as fleet:
        seat = fleet.seat("builder", WORK)
        store = SessionStore.beside(fleet.scope.directory)
        now = int(time.time() * 1000)
        anchor = now - 3 * 24 * HOUR - HOUR // 2  # armed 3 days ago, then the host was down
        state.write(store, "h.builder", [state.Entry("daily", "every 3600s", anchor, None, None, anchor + HOUR)])
        slot = anchor + ((now - anchor) // HOUR) * HOUR

        first = fleet.up("--interval", "30")
        poll_for(lambda: list_inbox(seat), lambda: f"no catch-up prompt: {fleet.log()}", timeout=30)
        fleet.stop(first, signal.SIGKILL)  # around the post: before or after its state write

        fleet.seat("builder", WORK + '\n    schedule "probe" { every "2h"; prompt "armed" }')
        second = fleet.up("--interval", "30")
        poll_for(lambda: "probe" in (state.read(store, "h.builder") or {}),
                 lambda: f"the restarted supervisor never ticked: {fleet.log()}", timeout=30)
        entries = state.read(store, "h.builder")
        [message] = list_inbox(seat)
        assert (message.sender, message.tags, message.body) == (
            "stream:schedule", ("st2-stream", "stream:schedule"), "summarize the day\n")
        assert entries["daily"].last_slot_ms == slot and entries["daily"].next_run_ms == slot + HOUR
        assert entries["probe"].last_slot_ms is None
        fleet.stop(second)
