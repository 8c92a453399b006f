"""Campaign part 6 at a tenth of full size: every class of hostile catalog issue 15 names, through
the real CLI, each command under a bound: no hang, no escape (traceback, raw control byte, shell
code run from a mail subject, a write through a link out of the catalog), no duplicate (a seat
running twice, a fleet another environment cannot stop, a runtime-id collision accepted)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import fault_catalog
from fault_common import TIER_SCALE

pytestmark = [pytest.mark.faults, pytest.mark.process]

@pytest.mark.parametrize("case", list(fault_catalog.CASES))
def test_a_hostile_catalog_class_neither_hangs_escapes_nor_duplicates(case):
    tally = fault_catalog.run_case(case, TIER_SCALE, Path(tempfile.mkdtemp(dir="/tmp", prefix="st2f6-")))
    print(f"{case}: RESULT hangs={tally.hangs} escapes={tally.escapes} duplicates={tally.duplicates} "
          f"commands={tally.commands}")
    assert tally.commands > 0
    assert tally.figures() == {"hangs": 0, "escapes": 0, "duplicates": 0}, "\n".join(tally.evidence)
