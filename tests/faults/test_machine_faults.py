"""Campaign part 5: disk full, inodes exhausted and a read-only catalog, each on its own small
tmpfs (root only: skipped loudly otherwise). No record or message is corrupted, no temp file is
left, the agents keep running (and the supervisor with them while it can), Doctor names the
fault, and every writer that fails says so in one line with a non-zero exit — no traceback."""

from __future__ import annotations

import pytest

import fault_disk
from fault_common import run_at_tier

# one_worker: every test reads the one campaign the module-scoped fixture runs.
pytestmark = [pytest.mark.faults, pytest.mark.process, pytest.mark.one_worker]

CASES = [f"{fault}/{writer}" for fault in fault_disk.FAULTS for writer in (*fault_disk.WRITERS, "up-once")]


@pytest.fixture(scope="module")
def campaign():
    if not fault_disk.is_root():
        pytest.skip("SKIPPED LOUDLY: the disk-fault campaign mounts tmpfs filesystems and needs root")
    return run_at_tier(fault_disk, "st2f5-")


def test_no_record_is_corrupted_and_the_agents_keep_running_under_every_machine_fault(campaign):
    assert campaign.figures["corrupted"] == 0, campaign.explain()
    for fault in fault_disk.FAULTS:
        assert campaign.notes["outcomes"][f"{fault}/supervisor"]["clear"], campaign.explain()
        assert not campaign.notes["outcomes"][f"{fault}/supervisor"]["traceback"], campaign.explain()


def test_doctor_names_every_machine_fault(campaign):
    for fault in fault_disk.FAULTS:
        assert campaign.notes["outcomes"][f"{fault}/doctor"]["clear"], campaign.explain()


@pytest.mark.parametrize("case", CASES)
def test_a_writer_on_a_faulty_filesystem_fails_in_one_clear_line(campaign, case):
    outcome = campaign.notes["outcomes"][case]
    assert not outcome["traceback"] and outcome["clear"], (case, outcome, campaign.explain())
