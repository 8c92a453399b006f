"""Doctor's filesystem check names a full, inode-exhausted or read-only filesystem under the
catalog or the runtime state, and is silent on a healthy one (real tmpfs mounts; root only)."""

from __future__ import annotations

import errno
import os
import subprocess
from pathlib import Path

import pytest

from st2.doctor.filesystem import faults_of, filesystem_findings

def root_only(test):
    """Real mounts: root only, and a process test (mount and umount are processes)."""
    return pytest.mark.process(pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")(test))


@pytest.fixture
def small_mount(tmp_path: Path):
    mount = tmp_path / "m"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k,nr_inodes=64", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def fill(mount: Path, inodes: bool) -> None:
    for index in range(100000):
        try:
            with open(mount / f"f{index}", "wb") as handle:
                if not inodes:
                    handle.write(b"\0" * 65536)
        except OSError as error:
            assert error.errno == errno.ENOSPC
            return


def test_a_healthy_filesystem_has_no_finding(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert faults_of(tmp_path) == []
    assert filesystem_findings(tmp_path, "h", 0) == []


@root_only
def test_a_full_filesystem_is_named_with_the_path(small_mount: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    catalog = small_mount / "catalog"
    catalog.mkdir()
    fill(small_mount, inodes=False)
    [finding] = filesystem_findings(catalog, "h", 0)
    assert finding.line().startswith(f"failure: catalog: filesystem: the catalog filesystem at {catalog} has no space left")


@root_only
def test_exhausted_inodes_are_named(small_mount: Path) -> None:
    fill(small_mount, inodes=True)
    assert "has no free inodes" in faults_of(small_mount / "not-yet-created")


@root_only
def test_a_read_only_state_directory_is_named(small_mount: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(small_mount))
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    lines = [finding.line() for finding in filesystem_findings(small_mount.parent, "h", 0)]
    assert lines == [f"failure: supervisor: filesystem: the runtime state filesystem at {small_mount / 'st2'} "
                     "is mounted read-only; writers there fail"]
