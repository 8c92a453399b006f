"""Atomic publication leaves no residue: a killed writer's staged temp is swept by the next
publication through the same staging directory; a live writer's temp is never touched."""

from __future__ import annotations

import pytest
import os
import subprocess
import sys
from pathlib import Path

from st2.fs.atomic import publish, sweep_orphans

pytestmark = pytest.mark.process


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_next_publication_sweeps_a_dead_writers_temp_and_keeps_a_live_ones(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    orphan = staging / f".record.{dead_pid()}.0123456789ab.tmp"
    orphan.write_bytes(b"half a rec")
    live = staging / f".record.{os.getpid()}.ba9876543210.tmp"
    live.write_bytes(b"being written")
    foreign = staging / "notes.txt"                   # not a temp name: never ours to remove
    foreign.write_bytes(b"x")
    publish(tmp_path / "record", b"whole\n", staging)
    assert (tmp_path / "record").read_bytes() == b"whole\n"
    assert sorted(path.name for path in staging.iterdir()) == sorted([live.name, foreign.name])


def test_without_a_publication_nothing_is_swept(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    orphan = staging / f".record.{dead_pid()}.0123456789ab.tmp"
    orphan.write_bytes(b"half")
    assert orphan.exists()
    assert sweep_orphans(staging) == 1 and not orphan.exists()
    assert sweep_orphans(tmp_path / "missing") == 0
