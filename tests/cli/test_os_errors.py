"""Faults of the machine through the real CLI, on small real tmpfs mounts (root only, skipped
loudly otherwise; unmounted in a finally): a full disk, an exhausted inode table and a read-only
catalog make every writer print one line naming the operation, the path and the errno, exit 74
(EX_IOERR, distinct from a refusal's 1), never a traceback; `up --once` on a full disk reports
the failure and launches nothing, while the same catalog with room succeeds."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process

EXIT_OS_ERROR = 74


@contextlib.contextmanager
def tmpfs(options: str):
    """A fresh tmpfs at a short path (PTY sockets live below it: the 104-byte sun_path bound)."""
    if os.geteuid() != 0:
        pytest.skip("SKIPPED LOUDLY: the machine-fault tests mount tmpfs filesystems and need root")
    directory = Path(tempfile.mkdtemp(prefix="st2o-", dir="/tmp"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(directory)], check=True, capture_output=True)
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], capture_output=True)
        shutil.rmtree(directory, ignore_errors=True)


def fleet(catalog: Path) -> None:
    for identity, extra in (("worker", "    ding\n"), ("peer", "")):
        seat = catalog / "agents" / "h" / identity
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "resources" / "archive").mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sleep" "600"\n{extra}}}\n')
    principal = catalog / "principals" / "h" / "operator"
    (principal / "resources" / "inbox").mkdir(parents=True)
    (principal / "principal.kdl").write_text('principal "operator" host="h"\n')


def fill_blocks(directory: Path) -> None:
    with open(directory / "filler", "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC


def fill_inodes(directory: Path) -> None:
    index = 0
    try:
        while True:
            (directory / f"i{index}").touch()
            index += 1
    except OSError as error:
        assert error.errno == errno.ENOSPC


def assert_one_line(result, reason: str) -> None:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == EXIT_OS_ERROR, result
    assert len(lines) == 1 and "Traceback" not in result.stderr + result.stdout, result.stderr
    assert reason in lines[0] and "/" in lines[0] and lines[0].startswith("st2 "), lines[0]


@pytest.mark.parametrize("fault", ["disk-full", "inodes-exhausted", "read-only"])
def test_every_writer_fails_in_one_line_with_the_os_error_exit(tmp_path: Path, fault: str) -> None:
    with tmpfs("size=2m,nr_inodes=400") as catalog:
        fleet(catalog)
        env = st2_env(catalog, XDG_STATE_HOME=str(catalog / "s"))
        filler = catalog / ".st2" / "filler"
        filler.mkdir(parents=True)
        if fault == "disk-full":
            fill_blocks(filler)
        elif fault == "inodes-exhausted":
            fill_inodes(filler)
        else:
            subprocess.run(["mount", "-o", "remount,ro", str(catalog)], check=True, capture_output=True)
        reason = "(EROFS)" if fault == "read-only" else "(ENOSPC)"
        for argv in (["message", "send", "worker", "-m", "x"], ["status", "worker", "--set", "busy"],
                     ["agent", "desired-state", "peer", "suspended", "--reason", "fault"]):
            result = run_st2(*argv, "--host", "h", env=env, timeout=60)
            assert_one_line(result, reason)


def test_up_once_on_a_full_disk_reports_the_failure_and_launches_nothing(tmp_path: Path) -> None:
    # The runtime state is on a healthy filesystem and only the catalog is full: the pass itself
    # could record launches, but every companion would die writing its first catalog file.
    state = Path(tempfile.mkdtemp(prefix="st2s-", dir="/tmp"))
    with tmpfs("size=2m") as catalog:
        fleet(catalog)
        env = st2_env(catalog, XDG_STATE_HOME=str(state))
        (catalog / ".st2").mkdir()
        fill_blocks(catalog / ".st2")
        once = run_st2("up", "--once", "--host", "h", env=env, timeout=60)
        assert_one_line(once, "(ENOSPC)")
        tasks = run_st2("tasks", "--json", "--host", "h", env=env, timeout=60)
        try:
            assert '"state":"running"' not in tasks.stdout.replace(" ", "")
        finally:
            run_st2("down", "--host", "h", env=env, timeout=60)
            shutil.rmtree(state, ignore_errors=True)


def test_up_once_with_room_succeeds(tmp_path: Path) -> None:
    with tmpfs("size=8m") as catalog:
        fleet(catalog)
        env = st2_env(catalog, XDG_STATE_HOME=str(catalog / "s"))
        try:
            once = run_st2("up", "--once", "--host", "h", env=env, timeout=60)
            assert once.returncode == 0, once.stderr
            assert not list(catalog.rglob(".st2-write-probe.*"))  # the probe leaves nothing
        finally:
            run_st2("down", "--host", "h", env=env, timeout=60)
