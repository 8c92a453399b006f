"""The test tiers are enforced: an unmarked (unit-tier) test cannot start a process, a `process`
test can. Enforced by the autouse fixture in tests/conftest.py."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_an_unmarked_test_cannot_start_a_process():
    with pytest.raises(AssertionError, match="carries no `process` marker"):
        subprocess.run([sys.executable, "-c", "pass"])
    with pytest.raises(AssertionError, match="carries no `process` marker"):
        os.fork()


@pytest.mark.process
def test_a_process_test_can():
    assert subprocess.run([sys.executable, "-c", "raise SystemExit(7)"]).returncode == 7


@pytest.mark.lab
def test_a_lab_test_is_a_process_test_too(request):
    assert request.node.get_closest_marker("process") is not None


@pytest.mark.multihost
def test_a_multihost_test_is_a_process_test_too(request):
    assert request.node.get_closest_marker("process") is not None


def xdist_slices(order: list, workers: int) -> list[list]:
    """The contiguous slices xdist's work-stealing scheduler first hands ``workers`` workers."""
    slices, remaining, start = [], len(order), 0
    for worker in range(workers):
        size = remaining // (workers - worker)
        slices.append(order[start:start + size])
        start, remaining = start + size, remaining - size
    return slices


@pytest.mark.parametrize("workers, long_count, total", [(4, 10, 100), (4, 3, 100), (3, 7, 20), (2, 30, 31), (1, 5, 9)])
def test_every_workers_slice_starts_with_its_share_of_the_long_tests(workers, long_count, total):
    from support import dealt

    items = [f"long{n}" if n % (total // long_count) == 0 and n // (total // long_count) < long_count else f"short{n}"
             for n in range(total)]
    order = dealt(items, workers, lambda item: item.startswith("long"))
    assert sorted(order) == sorted(items)                      # a permutation: nothing lost or doubled
    longs = [item for item in items if item.startswith("long")]
    for slice_ in xdist_slices(order, workers):
        shares = [item for item in slice_ if item.startswith("long")]
        assert slice_[:len(shares)] == shares                  # the slice's long tests come first
    counts = [sum(item.startswith("long") for item in slice_) for slice_ in xdist_slices(order, workers)]
    assert max(counts) - min(counts) <= 1 and sum(counts) == len(longs)   # dealt out evenly


def test_long_tests_kept_together_go_to_one_worker_and_the_rest_are_still_dealt_round_robin():
    from support import dealt

    items = [f"long-a{n}" for n in range(9)] + [f"long{n}" for n in range(5)] + [f"short{n}" for n in range(60)]
    order = dealt(items, 4, lambda item: item.startswith("long"),
                  lambda item: "a" if item.startswith("long-a") else None)
    assert sorted(order) == sorted(items)
    slices = xdist_slices(order, 4)
    holding = [index for index, slice_ in enumerate(slices) if any(item.startswith("long-a") for item in slice_)]
    assert len(holding) == 1                                              # the module's run happens once
    assert slices[holding[0]][:9] == [f"long-a{n}" for n in range(9)]     # at the head of its slice
    others = [sum(item.startswith("long") and not item.startswith("long-a") for item in slice_) for slice_ in slices]
    assert others == [1, 2, 1, 1]        # six units round-robin: the kept-together one counts as one
