"""The opt-in systemd tier: a private `systemd --user` manager per test (private_manager.py).

Runs only with ST2_SYSTEMD_TESTS=1, as root, on a machine whose PID 1 is not systemd, after
fencing the manager into dedicated cgroups; otherwise every test here skips with the reason.
Never part of .ci/run. Run it alone and serially:

    ST2_SYSTEMD_TESTS=1 .venv/bin/python -m pytest -p no:xdist -v tests/systemd
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from private_manager import PrivateManager, current_refusals  # noqa: E402


@pytest.fixture
def manager():
    reasons, hierarchies = current_refusals()
    if reasons:
        pytest.skip("; ".join(reasons))
    private = PrivateManager(hierarchies)
    try:
        private.start()
        yield private
    finally:
        problems = private.stop()
        for note in private.moved_up:
            print(f"note: moved to an ancestor cgroup by its owner (not by the manager): {note}")
        assert not problems, "teardown found: " + "\n".join(problems)
