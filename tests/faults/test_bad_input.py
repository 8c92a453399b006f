"""Campaign part 4 at a tenth of full size (1,000 hypothesis cases per reader, plus every planted
non-regular or oversize file): no exception escapes a reader, nothing absent becomes a definite
value, a refusal writes nothing, and every call returns within its bound."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

import fault_input
from fault_common import TIER_SCALE

pytestmark = [pytest.mark.faults, pytest.mark.process]

@pytest.mark.parametrize("reader", fault_input.READERS)
def test_a_reader_survives_hostile_bytes_and_planted_files(reader):
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2f4-"))
    try:
        tally = fault_input.run_reader(reader, TIER_SCALE, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{reader}: RESULT exceptions={tally.exceptions} fabricated={tally.fabricated} hangs={tally.hangs} "
          f"cases={tally.cases}")
    assert tally.cases >= 1000
    assert (tally.exceptions, tally.fabricated, tally.hangs) == (0, 0, 0), "\n".join(tally.evidence)


def test_the_watchdog_counts_a_hang_and_an_escape_instead_of_dying(tmp_path):
    import os
    import time

    tally = fault_input.Tally()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _swallow.fifo = fifo
    original = fault_input.BOUND_SECONDS, fault_input.BLOCK_SECONDS
    fault_input.BOUND_SECONDS, fault_input.BLOCK_SECONDS = 0.2, 2.0
    try:
        began = time.monotonic()
        assert fault_input.guarded(tally, "blocking open", lambda: open(fifo, "rb")) == (False, None)
        assert time.monotonic() - began < 5
        began = time.process_time()
        assert fault_input.guarded(tally, "spin", _spin) == (False, None)          # the CPU bound
        assert time.process_time() - began < 5
        assert fault_input.guarded(tally, "swallowed", _swallow) == (False, None)  # a Hang not delivered
        # Past the CPU bound in wall time but idle (as a call descheduled on a loaded machine): no hang.
        assert fault_input.guarded(tally, "slow but idle", lambda: time.sleep(0.6) or 8) == (True, 8)
        assert fault_input.guarded(tally, "escape", lambda: 1 / 0) == (False, None)
        assert fault_input.guarded(tally, "deep", lambda: _recurse(2000)) == (False, None)
        assert fault_input.guarded(tally, "fine", lambda: 7) == (True, 7)
    finally:
        fault_input.BOUND_SECONDS, fault_input.BLOCK_SECONDS = original
    assert (tally.hangs, tally.exceptions, tally.cases) == (3, 2, 7)


def _spin() -> None:
    while True:
        pass


def _swallow() -> int:
    """A call inside which the watchdog's Hang is lost, as in a garbage-collection callback
    (where Python prints the exception and goes on)."""
    try:
        open(_swallow.fifo, "rb")
    except fault_input.Hang:
        pass
    return 1


def _recurse(depth: int) -> int:
    return 0 if depth == 0 else 1 + _recurse(depth - 1)
