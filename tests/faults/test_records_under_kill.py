"""Campaign part 3 at a tenth of full size: four writers of one session, random SIGKILLs; every
landed harness-context and harness-state parses and was announced, writes are byte-distinct,
and no temp file survives."""

from __future__ import annotations

import pytest

import fault_records
from fault_common import run_at_tier

pytestmark = [pytest.mark.faults, pytest.mark.process]


def test_records_written_by_killed_concurrent_writers_are_never_torn_and_leave_no_residue():
    verdict = run_at_tier(fault_records, "st2f3-")
    assert verdict.figures == {"torn": 0, "residue": 0}, verdict.explain()
    assert verdict.notes["kills"] >= 6 and verdict.notes["distinct_samples"] >= 20, verdict.notes
