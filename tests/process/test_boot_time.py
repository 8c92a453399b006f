"""One boot time for every st2 process of a boot and user (st2.process.proc_stat.boot_time): the
kernel's ``btime`` moves when the wall clock steps, the recorded one does not."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support import REPO, boot_id, kernel_boot_time, under_boot_time

from st2.process import proc_stat

READ_ONE_START = (
    "import os; from st2.process import identity, proc_stat; "
    "print(proc_stat.boot_time(), identity.observe(os.getpid()).start_time, proc_stat.read(os.getpid()).start_ticks)"
)


@pytest.mark.process
def test_a_process_reckons_start_times_from_the_recorded_boot_time_when_the_kernels_has_moved(tmp_path: Path) -> None:
    moved = kernel_boot_time() - 1  # recorded before a wall-clock step of a second or more
    recorded = tmp_path / "boot-time"
    recorded.write_text(f"{boot_id()} {moved}\n")
    answer = subprocess.run(under_boot_time(recorded, [sys.executable, "-c", READ_ONE_START]),
                            capture_output=True, text=True, cwd=REPO, timeout=30)
    assert answer.returncode == 0, answer.stderr
    boot, start, ticks = answer.stdout.split()
    assert float(boot) == moved
    assert abs(float(start) - (moved + int(ticks) / proc_stat.CLOCK_TICKS)) < 1e-6


def test_the_first_reading_of_a_boot_is_recorded_for_the_user_alone(tmp_path: Path) -> None:
    path = tmp_path / "boot-time"
    assert proc_stat.shared_boot_time(str(path)) == kernel_boot_time()
    assert path.read_text() == f"{boot_id()} {kernel_boot_time()}\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["boot-time"]  # its staging file is gone


def test_a_recorded_reading_wins_over_the_kernels(tmp_path: Path) -> None:
    path = tmp_path / "boot-time"
    path.write_text(f"{boot_id()} {kernel_boot_time() + 7}\n")
    assert proc_stat.shared_boot_time(str(path)) == kernel_boot_time() + 7
    assert path.read_text() == f"{boot_id()} {kernel_boot_time() + 7}\n"


@pytest.mark.parametrize("what", ["another-boot", "garbage", "empty", "huge", "fifo", "symlink", "directory"])
def test_a_file_that_is_not_this_boots_record_is_replaced_never_followed_or_waited_on(tmp_path: Path, what: str) -> None:
    path = tmp_path / "boot-time"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("kept\n")
    if what == "another-boot":
        path.write_text(f"00000000-0000-0000-0000-000000000000 {kernel_boot_time() - 3600}\n")
    elif what == "garbage":
        path.write_text(f"{boot_id()} 12e9\n")
    elif what == "empty":
        path.write_text("")
    elif what == "huge":
        path.write_text(f"{boot_id()} {kernel_boot_time() - 5}" + " " * 1_000_000 + "\n")
    elif what == "fifo":
        os.mkfifo(path)
    elif what == "directory":
        path.mkdir()
        reading = proc_stat.shared_boot_time(str(path))   # a directory cannot be replaced: the kernel's value
        assert reading == kernel_boot_time() and path.is_dir() and sorted(os.listdir(tmp_path)) == ["boot-time", "elsewhere"]
        return
    else:
        path.symlink_to(elsewhere)
    reading: list[float] = []
    reader = threading.Thread(target=lambda: reading.append(proc_stat.shared_boot_time(str(path))), daemon=True)
    reader.start()
    reader.join(10)
    assert reading == [kernel_boot_time()], f"{what}: the reader hung or took a foreign value"
    assert not path.is_symlink() and path.read_text() == f"{boot_id()} {kernel_boot_time()}\n"
    assert elsewhere.read_text() == "kept\n"


def test_another_users_file_is_not_trusted(tmp_path: Path) -> None:
    """Another user may have planted the name in ``/tmp``: its value is never taken. (In the sticky
    ``/tmp`` only root could then replace it; every other user keeps the kernel's reading.)"""
    if os.getuid() != 0:
        pytest.skip("SKIPPED LOUDLY: giving the file to another user needs root")
    path = tmp_path / "boot-time"
    path.write_text(f"{boot_id()} {kernel_boot_time() - 60}\n")
    os.chown(path, 65534, 65534)
    assert proc_stat.shared_boot_time(str(path)) == kernel_boot_time()
    assert path.stat().st_uid == 0 and path.read_text() == f"{boot_id()} {kernel_boot_time()}\n"
