"""Atomic record publication: a writer killed between write and rename leaves the old record
intact and nothing inside the seat; unsafe ancestry and cross-device staging are refused rather
than degraded to a copy."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support import poll_for
from st2.base.clock import FakeClock
from st2.fs.atomic import UnsafePublication, publish
from st2.records import placement, status
from support import REPO

STALLED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from st2.base.clock import Clock
    from st2.records import status

    marker = Path(sys.argv[2])

    def stalled_replace(source, destination):
        # Reached after the temp file is written and fsynced, before the rename.
        marker.write_text(str(source))
        time.sleep(120)

    os.replace = stalled_replace
    status.write(Path(sys.argv[1]), "busy", Clock())
    """
)


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


@pytest.mark.process
def test_a_writer_killed_between_write_and_rename_leaves_the_old_record(seat: Path, tmp_path: Path,
                                                                         clock: FakeClock) -> None:
    status.write(seat, "available", clock)
    old = (seat / "status").read_bytes()
    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", STALLED_WRITER, str(seat), str(marker)], cwd=REPO,
                             start_new_session=True)
    try:
        poll_for(marker.exists, "the marker", timeout=20)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert (seat / "status").read_bytes() == old
    assert sorted(path.name for path in seat.iterdir()) == [".status.lock", "status"]
    orphan = Path(marker.read_text())
    # The complete new record sat staged in the control plane, never inside the seat.
    assert orphan.parent == seat.parents[2] / ".st2" / status.STAGING_NAME
    assert orphan.read_bytes().startswith(b"busy\nv1 ")


def test_a_symlinked_ancestor_is_refused(catalog: Path, tmp_path: Path, clock: FakeClock) -> None:
    elsewhere = tmp_path / "elsewhere" / "worker"
    elsewhere.mkdir(parents=True)
    (catalog / "agents" / "host").symlink_to(elsewhere.parent)
    with pytest.raises(UnsafePublication):
        status.write(catalog / "agents" / "host" / "worker", "busy", clock)
    assert not (elsewhere / "status").exists()


def test_a_real_ancestry_is_accepted(seat: Path, clock: FakeClock) -> None:
    status.write(seat, "busy", clock)
    assert (seat / "status").exists()


def test_a_symlinked_staging_directory_is_refused(seat: Path, catalog: Path, tmp_path: Path, clock: FakeClock) -> None:
    (tmp_path / "other-control").mkdir()
    (catalog / ".st2").symlink_to(tmp_path / "other-control")
    with pytest.raises(UnsafePublication):
        status.write(seat, "busy", clock)
    assert not (seat / "status").exists()


def test_a_non_canonical_seat_path_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    loose = tmp_path / "not-a-catalog" / "worker"
    loose.mkdir(parents=True)
    with pytest.raises(UnsafePublication):
        placement.catalog_root_of(loose)


def test_a_staging_directory_on_another_device_is_refused(tmp_path: Path) -> None:
    shared_memory = Path("/dev/shm")
    if not shared_memory.is_dir() or os.stat(shared_memory).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second filesystem (/dev/shm) distinct from the temp dir on this machine")
    staging = shared_memory / f"st2-staging-{os.getpid()}"
    staging.mkdir(exist_ok=True)
    try:
        target = tmp_path / "record"
        target.write_bytes(b"old\n")
        with pytest.raises(UnsafePublication):
            publish(target, b"new\n", staging)
        assert target.read_bytes() == b"old\n"
        assert list(staging.iterdir()) == []
        publish(target, b"new\n", tmp_path)  # the same call on one device lands
        assert target.read_bytes() == b"new\n"
    finally:
        staging.rmdir()
