"""Campaign part 3 at a tenth of full size: four writers of one session, random SIGKILLs; every
landed harness-context and harness-state parses and was announced, writes are byte-distinct,
and no temp file survives."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

import fault_records
from fault_common import TIER_SCALE

pytestmark = [pytest.mark.faults, pytest.mark.process]


def test_records_written_by_killed_concurrent_writers_are_never_torn_and_leave_no_residue():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2f3-"))
    try:
        verdict = fault_records.run(TIER_SCALE, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(verdict.line(), verdict.notes)
    assert verdict.figures == {"torn": 0, "residue": 0}, verdict.explain()
    assert verdict.notes["kills"] >= 6 and verdict.notes["distinct_samples"] >= 20, verdict.notes
