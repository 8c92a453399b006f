"""Record locks exclude across processes and are released when the holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from st2.fs.lock import LockTimeout, lock_path_for, record_lock

HOLDER = """
import sys, time
from st2.fs.lock import record_lock
with record_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(60)
"""


def test_lock_file_is_the_dotted_sibling(tmp_path: Path) -> None:
    assert lock_path_for(tmp_path / "harness-context") == tmp_path / ".harness-context.lock"


def start_holder(record: Path) -> subprocess.Popen:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(record)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.process
def test_a_second_process_cannot_take_a_held_lock(tmp_path: Path) -> None:
    record = tmp_path / "harness-state"
    holder = start_holder(record)
    try:
        with pytest.raises(LockTimeout):
            record_lock(record, timeout=0.2).acquire()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.process
def test_a_sigkilled_holder_releases_the_lock(tmp_path: Path) -> None:
    record = tmp_path / "harness-state"
    holder = start_holder(record)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    with record_lock(record, timeout=5) as lock:
        assert lock.is_locked
    assert not lock.is_locked
    assert lock_path_for(record).exists(), "the lock file is never deleted"


def test_holders_names_the_pid_holding_a_flock_and_not_a_waiter_nor_another_file(tmp_path: Path) -> None:
    from st2.fs.lock import RecordLock, holders

    path, other = tmp_path / "seat.lock", tmp_path / "other.lock"
    assert holders(path) == set()                     # no file: nobody
    lock = RecordLock(path)
    lock.acquire()
    try:
        assert holders(path) == {os.getpid()}
        assert holders(other) == set()
        table = tmp_path / "locks"
        device = os.stat(path)
        spelled = f"{os.major(device.st_dev):02x}:{os.minor(device.st_dev):02x}:{device.st_ino}"
        table.write_text(f"1: FLOCK  ADVISORY  WRITE 4242 {spelled} 0 EOF\n"
                         f"1: -> FLOCK  ADVISORY  WRITE 4343 {spelled} 0 EOF\n"
                         f"2: POSIX  ADVISORY  WRITE 4444 {spelled} 0 EOF\n"
                         "3: FLOCK  ADVISORY  WRITE junk\n")
        assert holders(path, table=str(table)) == {4242}
    finally:
        lock.release()
    assert holders(path) == set()
