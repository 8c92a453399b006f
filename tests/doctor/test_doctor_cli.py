"""`st2 doctor` record advisories: worth attention, never a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import MINUTE_MS, NOW_MS, context_record, state_record
from support import run_st2, st2_env


def seat(root: Path, identity: str, desired: str = "") -> Path:
    directory = root / "agents" / "alpha" / identity
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{desired}    argv "sh" "-c" "true"\n}}\n')
    return directory


def write(path: Path, record: dict) -> None:
    path.write_text(json.dumps(record) + "\n")


def doctor(catalog: Path):
    return run_st2("doctor", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))


@pytest.mark.process
def test_context_fill_at_the_threshold_advises_and_below_it_is_silent(catalog: Path) -> None:
    write(seat(catalog, "full") / "harness-context", context_record("full", "codex", NOW_MS - 4000, usedPercent=80))
    write(seat(catalog, "roomy") / "harness-context", context_record("roomy", "codex", NOW_MS - 4000, usedPercent=79.9))
    result = doctor(catalog)
    assert result.returncode == 0
    assert result.stdout == "advisory: alpha.full: context-fill: context window 80% full (reading 4s old)\n"


@pytest.mark.process
def test_a_stale_context_advises_only_while_the_seat_should_run(catalog: Path) -> None:
    old = NOW_MS - 61 * MINUTE_MS
    write(seat(catalog, "running") / "harness-context", context_record("running", "codex", old))
    write(seat(catalog, "parked", '    desired-state "suspended" reason="later"\n') / "harness-context",
          context_record("parked", "codex", old))
    result = doctor(catalog)
    assert result.returncode == 0
    assert result.stdout == ("advisory: alpha.running: context-stale: context reading is older than the horizon "
                             "(61m old) while desired state is running\n")


@pytest.mark.process
def test_an_unknown_observed_state_advises_while_running_and_a_fresh_one_is_silent(catalog: Path) -> None:
    write(seat(catalog, "gone") / "harness-state", state_record("gone", "idle", NOW_MS - 16 * MINUTE_MS))
    write(seat(catalog, "here") / "harness-state", state_record("here", "idle", NOW_MS - 1000))
    result = doctor(catalog)
    assert result.returncode == 0
    assert result.stdout == ("advisory: alpha.gone: observed-state-unknown: observed harness state is unknown (stale) "
                             "while desired state is running\n")


@pytest.mark.process
def test_a_driver_failure_advises_and_absence_is_silent(catalog: Path) -> None:
    write(seat(catalog, "failing") / "driver-diagnostic", {
        "schema": "st2.driver-diagnostic.v1", "driver": "opencode", "stage": "readBack", "reason": "notDurable",
        "source": "messageReadBack", "support": "supported", "observedAt": NOW_MS - 3000,
        "recovery": "clearsOnStageRecovery"})
    seat(catalog, "quiet")
    result = doctor(catalog)
    assert result.returncode == 0
    assert result.stdout == ("advisory: alpha.failing: driver-diagnostic: opencode driver failed at stage readBack: "
                             "notDurable (source messageReadBack, evidence 3s old); recovery: clearsOnStageRecovery\n")


@pytest.mark.process
def test_a_clean_catalog_reports_no_findings(catalog: Path) -> None:
    seat(catalog, "quiet")
    result = doctor(catalog)
    assert (result.returncode, result.stdout) == (0, f"ok: {catalog}: no findings\n")


@pytest.mark.process
def test_a_broken_declaration_is_a_failure(catalog: Path) -> None:
    broken = catalog / "agents" / "alpha" / "broken"
    broken.mkdir(parents=True)
    (broken / "agent.kdl").write_text('agent "broken" {\n    bogus-node 1\n}\n')
    result = doctor(catalog)
    assert result.returncode == 1
    assert result.stdout.startswith("failure: catalog: declaration: ")
    assert "agent.kdl:2:5" in result.stdout
