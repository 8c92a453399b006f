"""Campaign part 2 at a tenth of full size: eight senders, four DING seats running the stand-in
TUI, notifiers and the supervisor SIGKILLed at random; every message noticed exactly once (never
by a generic backlog notice: every notifier first started on an empty inbox), FIFO per sender
and seat."""

from __future__ import annotations

import pytest

import fault_mail
from fault_common import run_at_tier

pytestmark = [pytest.mark.faults, pytest.mark.process]


def test_every_message_is_noticed_exactly_once_while_notifiers_and_the_supervisor_are_killed():
    verdict = run_at_tier(fault_mail, "st2f2-")
    assert verdict.figures["lost"] == 0 and verdict.figures["double_paste"] == 0, verdict.explain()
    assert verdict.notes["fifo_violations"] == 0 and verdict.notes["foreign_submits"] == 0, verdict.explain()
    assert verdict.notes["notifier_kills"] >= 8 and verdict.notes["supervisor_kills"] >= 3, verdict.notes
