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
