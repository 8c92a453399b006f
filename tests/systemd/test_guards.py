"""The systemd tier's fences, proved without starting anything (these run in the normal suite):
the guard refuses every unsafe situation, the cgroup hierarchies are matched to their mounts,
a membership change is classified, and the launcher refuses before exec when it is not fenced."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from private_manager import LAUNCHER, OPT_IN, Hierarchy, changed_memberships, guard_refusals, parse_hierarchies

MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
34 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
CGROUP = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n"
HIERARCHIES = parse_hierarchies(MOUNTINFO, CGROUP)
SAFE = dict(environment={OPT_IN: "1"}, euid=0, pid1_command="process_api", booted=False, missing_tools=[],
            hierarchies=HIERARCHIES)


def test_every_hierarchy_is_matched_to_its_mount_and_our_place_in_it() -> None:
    assert HIERARCHIES == [
        Hierarchy(Path("/sys/fs/cgroup/systemd"), 1, "name=systemd", "/"),
        Hierarchy(Path("/sys/fs/cgroup/memory"), 1, "memory", "/process_api/abc"),
        Hierarchy(Path("/sys/fs/cgroup/cpu,cpuacct"), 1, "cpu,cpuacct", "/"),
        Hierarchy(Path("/sys/fs/cgroup/unified"), 2, "", "/"),
    ]
    assert HIERARCHIES[1].own_directory == Path("/sys/fs/cgroup/memory/process_api/abc")


def test_an_unmounted_hierarchy_cannot_be_fenced() -> None:
    with pytest.raises(LookupError, match="pids"):
        parse_hierarchies(MOUNTINFO, CGROUP + "8:pids:/\n")


def test_the_guard_lets_a_fenceable_root_run_when_asked() -> None:
    assert guard_refusals(**SAFE) == []


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"environment": {}}, "opt-in tier: set ST2_SYSTEMD_TESTS=1"),
        ({"environment": {OPT_IN: "yes"}}, "opt-in tier"),
        ({"euid": 1000}, "needs root"),
        ({"pid1_command": "systemd"}, "this machine runs systemd"),
        ({"booted": True}, "this machine runs systemd"),
        ({"missing_tools": ["unshare"]}, "missing tools: unshare"),
        ({"hierarchies": "cgroup hierarchy '8:pids:/' is not mounted here"}, "cannot fence the manager"),
        ({"hierarchies": []}, "no cgroup hierarchy is mounted"),
    ],
)
def test_the_guard_refuses_each_unsafe_situation(change: dict, reason: str) -> None:
    refusals = guard_refusals(**{**SAFE, **change})
    assert len(refusals) == 1 and refusals[0].startswith(reason)


def snapshot(**memberships: str) -> dict:
    return {(pid.removeprefix("p"), "100"): (text, f"command {pid}") for pid, text in memberships.items()}


def test_a_process_moved_into_our_cgroup_is_a_problem() -> None:
    before = snapshot(p1="9:name=systemd:/\n0::/\n")
    after = snapshot(p1="9:name=systemd:/st2-systemd-tier-1-aa/init.scope\n0::/\n")
    unexplained, moved_up = changed_memberships(before, after, "st2-systemd-tier-1-aa")
    assert unexplained == ["pid 1 (command p1): 9:name=systemd:/ -> 9:name=systemd:/st2-systemd-tier-1-aa/init.scope"]
    assert moved_up == []


def test_any_other_move_down_or_sideways_is_a_problem() -> None:
    before = snapshot(p7="4:memory:/a\n")
    after = snapshot(p7="4:memory:/b/c\n")
    assert changed_memberships(before, after, "ours")[0] == ["pid 7 (command p7): 4:memory:/a -> 4:memory:/b/c"]


def test_a_move_to_an_ancestor_by_the_cgroup_owner_is_only_noted() -> None:
    before = snapshot(p7="4:memory:/process_api/abc\n0::/\n", p8="0::/\n")
    after = snapshot(p7="4:memory:/\n0::/\n", p8="0::/\n")
    assert changed_memberships(before, after, "ours") == ([], ["pid 7 (command p7): 4:memory:/process_api/abc -> 4:memory:/"])


def test_an_unchanged_machine_has_nothing_to_report() -> None:
    before = snapshot(p1="0::/init.scope\n", p2="4:memory:/x\n")
    assert changed_memberships(before, dict(before), "ours") == ([], [])


@pytest.mark.process
def test_the_launcher_refuses_a_cgroup_that_is_not_the_dedicated_one(tmp_path: Path) -> None:
    result = subprocess.run([str(LAUNCHER), "st2-systemd-tier-x", "/bin/false", str(tmp_path)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 97
    assert "is not a dedicated cgroup named st2-systemd-tier-x" in result.stderr


@pytest.mark.process
def test_the_launcher_refuses_to_start_while_outside_the_dedicated_cgroups() -> None:
    # Given no cgroup to move into, it is still where it started: it must not exec the manager.
    result = subprocess.run([str(LAUNCHER), "st2-systemd-tier-x", "/bin/false"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 98
    assert "still outside the dedicated cgroup" in result.stderr and "refusing to start" in result.stderr
