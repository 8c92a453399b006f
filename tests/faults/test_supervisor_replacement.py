"""Campaign part 1 at a tenth of full size: the supervisor is SIGKILLed or SIGTERMed, idle and
mid-pass, and replaced by a different build; every task keeps its PID and start time, is listed
once, and nothing is launched twice."""

from __future__ import annotations

import pytest

import fault_supervisor
from fault_common import run_at_tier

pytestmark = [pytest.mark.faults, pytest.mark.process]


def test_every_task_survives_rounds_of_supervisor_kills_and_replacement_builds():
    verdict = run_at_tier(fault_supervisor, "st2f1-")
    assert verdict.figures["lost"] == 0 and verdict.figures["duplicated"] == 0, verdict.explain()
    assert verdict.notes["mid_pass_kills"] >= 1 and verdict.notes["replaced_builds"] >= 1, verdict.notes
