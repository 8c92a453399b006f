"""`st2 catalog archive` / `unarchive` (docs/catalog.md §Archival): a retired
seat leaves discovery byte-identically with a tombstone, eligibility fails closed before anything
moves, --dry-run creates nothing, unarchive is the exact reverse, and a SIGKILL at any step leaves
the seat live or archived, never both or neither."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from support import compact

pytestmark = pytest.mark.process

NOW = 1_788_000_000_000
RETIRED = '    desired-state "retired" reason="Migration finished"\n    argv "sleep" "600"'


def tree(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes()
            for path in sorted(directory.rglob("*")) if path.is_file()}


def retired_seat(fleet, identity: str = "gone", body: str = RETIRED) -> Path:
    directory = fleet.seat(identity, body)
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "resources" / "goal.md").write_text("the goal\n")
    (directory / "resources" / "inbox" / "1750000000000-abc123.md").write_text("---\nfrom: h.x\n---\nhi\n")
    (directory / "status").write_text("offline\n")
    return directory


def st2(fleet, *arguments: str, crash_at: str | None = None):
    fleet.env["ST2_CLOCK_WALL_MS"] = str(NOW)
    if crash_at is None:
        fleet.env.pop("ST2_TEST_CRASH_AT", None)
    else:
        fleet.env["ST2_TEST_CRASH_AT"] = crash_at
    try:
        return fleet.st2(*arguments)
    finally:
        fleet.env.pop("ST2_TEST_CRASH_AT", None)


def test_archive_moves_a_retired_seat_out_of_discovery_with_its_resources_byte_identical(fleet):
    directory = retired_seat(fleet)
    before = tree(directory)
    result = st2(fleet, "catalog", "archive", "--identity", "gone", "--json")
    assert result.returncode == 0, result.stderr
    assert result.stdout == compact({
        "schema": "st2.catalog-archive.v1", "host": "h", "archiveRoot": ".st2/archive", "dryRun": False,
        "archived": [{"id": "h.gone", "host": "h", "identity": "gone", "from": "agents/h/gone",
                      "to": ".st2/archive/h/gone", "archivedAt": NOW, "reason": "Migration finished",
                      "worktree": None}],
        "refused": []}) + "\n"
    assert not directory.exists()
    slot = fleet.catalog / ".st2" / "archive" / "h" / "gone"
    assert tree(slot) == before
    assert (fleet.catalog / ".st2" / "archive" / "h" / "gone.tombstone.json").read_text() == (
        '{\n  "schema": "st2.catalog-archive-tombstone.v1",\n  "id": "h.gone",\n  "host": "h",\n'
        f'  "identity": "gone",\n  "archivedAt": {NOW},\n  "reason": "Migration finished",\n'
        '  "archiveRoot": ".st2/archive/h/gone"\n}\n')
    assert json.loads(fleet.st2("agents", "--json").stdout) == []
    assert fleet.st2("validate").returncode == 0
    assert (fleet.catalog / ".st2" / "catalog-generation").read_text() == "1\n"


@pytest.mark.parametrize("lifecycle, state", [("", "running"),
                                               ('    desired-state "suspended" reason="later"\n', "suspended")])
def test_archive_refuses_a_running_or_suspended_declaration(fleet, lifecycle, state):
    directory = fleet.seat("live", lifecycle + '    argv "sleep" "600"')
    result = st2(fleet, "catalog", "archive", "--identity", "live")
    assert result.returncode == 1
    assert result.stderr == (f"st2 catalog archive: [not-retired] refusing to archive h.live: desired state is "
                             f"'{state}'; archive requires retired\n")
    assert directory.is_dir() and not (fleet.catalog / ".st2" / "archive").exists()
    # --all-retired reports nothing to do instead of refusing the run.
    assert st2(fleet, "catalog", "archive", "--all-retired").stdout == "nothing to archive\n"


def test_archive_refuses_while_any_declared_task_record_survives(fleet):
    directory = retired_seat(fleet, body=RETIRED + "\n    ding")
    fleet.scope.tasks.mkdir(parents=True, exist_ok=True)
    record = fleet.scope.tasks / "h.gone.ding.json"
    record.write_text('{"schema":"st2.launch-record.v1"}')
    result = st2(fleet, "catalog", "archive", "--identity", "gone")
    assert result.returncode == 1
    assert "[runtime-record-present]" in result.stderr and "h.gone.ding" in result.stderr
    assert directory.is_dir()
    record.unlink()
    assert st2(fleet, "catalog", "archive", "--identity", "gone").returncode == 0
    assert not directory.exists()


def test_archive_refuses_an_identity_another_declaration_still_names_as_supervisor(fleet):
    lead = retired_seat(fleet, "lead")
    worker = fleet.seat("worker", '    supervisor "lead"\n' + RETIRED)
    result = st2(fleet, "catalog", "archive", "--identity", "lead")
    assert result.returncode == 1
    assert "[supervisor-referenced] refusing to archive h.lead: still supervises h.worker" in result.stderr
    assert lead.is_dir() and worker.is_dir()
    together = st2(fleet, "catalog", "archive", "--identity", "lead", "--identity", "worker")
    assert together.returncode == 0, together.stderr
    assert not lead.exists() and not worker.exists()


def test_dry_run_reports_the_plan_and_changes_nothing(fleet):
    directory = retired_seat(fleet)
    result = st2(fleet, "catalog", "archive", "--all-retired", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "would archive h.gone -> .st2/archive/h/gone\n"
    assert directory.is_dir()
    assert not (fleet.catalog / ".st2").exists()


def test_unarchive_restores_the_identity_byte_identically_and_clears_its_tombstone(fleet):
    directory = retired_seat(fleet)
    before = tree(directory)
    assert st2(fleet, "catalog", "archive", "--identity", "gone").returncode == 0
    restored = st2(fleet, "catalog", "unarchive", "gone", "--json")
    assert restored.returncode == 0, restored.stderr
    assert restored.stdout == compact({"schema": "st2.catalog-unarchive.v1", "id": "h.gone", "host": "h",
                                       "identity": "gone", "from": ".st2/archive/h/gone", "to": "agents/h/gone",
                                       "archivedAt": NOW}) + "\n"
    assert tree(directory) == before
    assert list((fleet.catalog / ".st2" / "archive" / "h").iterdir()) == []
    again = st2(fleet, "catalog", "unarchive", "gone")
    assert again.returncode == 1 and "[not-archived]" in again.stderr


def test_unarchive_refuses_when_a_live_seat_of_that_identity_exists(fleet):
    retired_seat(fleet)
    assert st2(fleet, "catalog", "archive", "--identity", "gone").returncode == 0
    recreated = fleet.seat("gone", '    argv "sleep" "600"')
    result = st2(fleet, "catalog", "unarchive", "h.gone")
    assert result.returncode == 1 and "[live-seat-exists]" in result.stderr
    assert (recreated / "agent.kdl").read_text() == 'agent "gone" {\n    argv "sleep" "600"\n}\n'
    assert (fleet.catalog / ".st2" / "archive" / "h" / "gone").is_dir()


def _placements(fleet) -> tuple[bool, bool]:
    return ((fleet.catalog / "agents" / "h" / "gone").is_dir(),
            (fleet.catalog / ".st2" / "archive" / "h" / "gone").is_dir())


@pytest.mark.parametrize("step", ["archive-planned", "archive-pending", "archive-moved", "archive-tombstoned"])
def test_a_sigkill_at_any_archive_step_leaves_the_seat_live_or_archived_never_both_or_neither(fleet, step):
    directory = retired_seat(fleet)
    before = tree(directory)
    crashed = st2(fleet, "catalog", "archive", "--identity", "gone", crash_at=step)
    assert crashed.returncode == -9, crashed.stderr
    live, archived = _placements(fleet)
    assert live != archived, (step, live, archived)
    # The next transaction finishes or discards the interrupted move, then archives as asked.
    command = ("--identity", "gone") if live else ("--all-retired",)
    assert st2(fleet, "catalog", "archive", *command).returncode == 0
    assert _placements(fleet) == (False, True)
    assert tree(fleet.catalog / ".st2" / "archive" / "h" / "gone") == before
    assert sorted(path.name for path in (fleet.catalog / ".st2" / "archive" / "h").iterdir()) == [
        "gone", "gone.tombstone.json"]


@pytest.mark.parametrize("step", ["unarchive-planned", "unarchive-moved"])
def test_a_sigkill_at_any_unarchive_step_leaves_the_seat_live_or_archived_never_both_or_neither(fleet, step):
    directory = retired_seat(fleet)
    before = tree(directory)
    assert st2(fleet, "catalog", "archive", "--identity", "gone").returncode == 0
    crashed = st2(fleet, "catalog", "unarchive", "gone", crash_at=step)
    assert crashed.returncode == -9
    live, archived = _placements(fleet)
    assert live != archived
    if archived:
        assert st2(fleet, "catalog", "unarchive", "gone").returncode == 0
    else:
        # The restored seat's stale tombstone is dropped by the next transaction.
        assert st2(fleet, "catalog", "archive", "--all-retired", "--dry-run").returncode == 0
        assert st2(fleet, "catalog", "unarchive", "gone").returncode == 1
    assert _placements(fleet) == (True, False)
    assert tree(directory) == before
    assert list((fleet.catalog / ".st2" / "archive" / "h").iterdir()) == []


def test_a_seat_retired_under_a_real_supervisor_archives_once_its_tasks_are_gone(fleet):
    from st2.runtime import launch_record
    from supervisor_support import poll_for

    directory = fleet.seat("worker", '    argv "sleep" "600"\n    exec "job" { argv "sleep" "600"; }')
    supervisor = fleet.up("--interval", "60s")
    assert poll_for(lambda: len(fleet.running()) == 2, timeout=20), fleet.log()
    assert fleet.stop(supervisor) == 0                      # tasks keep running without it
    assert fleet.st2("agent", "desired-state", "worker", "retired", "--reason", "done").returncode == 0
    live = st2(fleet, "catalog", "archive", "--identity", "worker")
    assert live.returncode == 1 and "[runtime-record-present]" in live.stderr
    assert "h.worker" in live.stderr and "h.worker.job" in live.stderr and directory.is_dir()
    fleet.up("--interval", "60s")
    assert poll_for(lambda: launch_record.recorded_ids(fleet.scope) == [], timeout=20), fleet.log()
    archived = st2(fleet, "catalog", "archive", "--identity", "worker")
    assert archived.returncode == 0, archived.stderr
    assert not directory.exists() and (fleet.catalog / ".st2" / "archive" / "h" / "worker").is_dir()
