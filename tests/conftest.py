"""Fixtures shared by every tier; helpers live in tests/support.py (importable as `support`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from support import dealt, run_st2


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    root = tmp_path / "catalog"
    (root / "agents").mkdir(parents=True)
    return root


@pytest.fixture
def st2():
    return run_st2


@pytest.fixture
def short_dir():
    """A fresh directory with a short path under /tmp (a tmux socket under it fits ``sun_path``),
    removed after the test."""
    directory = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2t-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


LONG_TIERS = ("lab", "faults", "multihost", "long")
WORKERS_PER_CORE = 3


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto`` (what ``scripts/dev test`` and the soak run) is three workers per core. On the
    2-core machine a fresh clone's pytest took 545 s with 4 workers and 488 s with 6; on a later
    suite 8 workers took 415 s against 413-420 s with 6, both cores busy throughout (sampled
    from ``/proc/stat``): past three a core, more workers only share the same CPU."""
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


def pytest_collection_modifyitems(config, items):
    """A lab, systemd or multihost test runs real processes too: it carries the ``process``
    marker as well, so ``-m "not process"`` alone selects the process-free unit tier.

    The long tiers (lab, faults, multihost, and a test marked ``long``) are queued first in every
    worker's share: xdist's work-stealing scheduler gives each worker one contiguous slice of the
    collection and steals from the tails, so the long tests are dealt out round-robin, each
    worker's slice starting with its own (in collected order) and ending with short tests the
    others can steal — never every long test in the first worker's slice, nor one at the tail.
    The long tests of a module marked ``one_worker`` go to one worker together: they share one
    module-scoped run (the machine-fault campaign ran once in each of the six workers it was
    dealt to)."""
    for item in items:
        if any(item.get_closest_marker(name) for name in ("lab", "systemd", "multihost")):
            item.add_marker(pytest.mark.process)
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    items[:] = dealt(items, workers, lambda item: any(item.get_closest_marker(name) for name in LONG_TIERS),
                     lambda item: item.nodeid.split("::")[0] if item.get_closest_marker("one_worker") else None)



def _refuse_spawn(nodeid: str):
    def refuse(*arguments, **keywords):
        raise AssertionError(f"{nodeid} starts a process but carries no `process` marker: mark it "
                             "@pytest.mark.process (the unmarked tier is the fast, process-free unit tier)")
    return refuse


@pytest.fixture(autouse=True)
def _unit_tests_spawn_nothing(request, monkeypatch):
    """Enforce the tiers: a test without the process marker (lab and systemd tests carry it too)
    may not start a process (subprocess, fork or spawn), so ``-m "not process"`` is the fast,
    process-free unit tier."""
    if request.node.get_closest_marker("process"):
        return
    refuse = _refuse_spawn(request.node.nodeid)
    real_execute_child = subprocess.Popen._execute_child

    def execute_child(self, args, *rest, **keywords):
        # ctypes.util.find_library (run once by a first import of inotify_simple) asks ldconfig:
        # a library lookup, not a process the test starts.
        program = args[0] if isinstance(args, (list, tuple)) and args else args
        if os.path.basename(str(program)) == "ldconfig":
            return real_execute_child(self, args, *rest, **keywords)
        return refuse(self, args, *rest, **keywords)

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_child)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
