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


RECORD_CHECKS = ("context-fill", "context-stale", "observed-state-unknown", "driver-diagnostic")


class DoctorRun:
    """`st2 doctor` over ``catalog`` and over the same catalog with its records removed: the
    record advisories are the difference, and they must leave the exit status unchanged."""

    def __init__(self, catalog: Path) -> None:
        env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS))
        result = run_st2("doctor", "--host", "alpha", env=env)
        self.returncode = result.returncode
        self.stdout = "".join(line + "\n" for line in result.stdout.splitlines()
                              if line.split(": ")[2:3] and line.split(": ")[2] in RECORD_CHECKS)
        self.full = result.stdout
        for record in ("harness-context", "harness-state", "driver-diagnostic"):
            for path in catalog.glob(f"agents/*/*/{record}"):
                path.rename(path.with_name(f"{record}.set-aside"))
        baseline = run_st2("doctor", "--host", "alpha", env=env)
        for path in catalog.glob("agents/*/*/*.set-aside"):
            path.rename(path.with_name(path.name.removesuffix(".set-aside")))
        self.baseline_returncode = baseline.returncode
        assert not any(line.split(": ")[2:3] and line.split(": ")[2] in RECORD_CHECKS
                       for line in baseline.stdout.splitlines())


def doctor(catalog: Path) -> DoctorRun:
    run = DoctorRun(catalog)
    assert run.returncode == run.baseline_returncode, "a record advisory changed the exit status"
    return run


@pytest.mark.process
def test_context_fill_at_the_threshold_advises_and_below_it_is_silent(catalog: Path) -> None:
    write(seat(catalog, "full") / "harness-context", context_record("full", "codex", NOW_MS - 4000, usedPercent=80))
    write(seat(catalog, "roomy") / "harness-context", context_record("roomy", "codex", NOW_MS - 4000, usedPercent=79.9))
    result = doctor(catalog)
    assert result.stdout == "advisory: alpha.full: context-fill: context window 80% full (reading 4s old)\n"


@pytest.mark.process
def test_a_stale_context_advises_only_while_the_seat_should_run(catalog: Path) -> None:
    old = NOW_MS - 61 * MINUTE_MS
    write(seat(catalog, "running") / "harness-context", context_record("running", "codex", old))
    write(seat(catalog, "parked", '    desired-state "suspended" reason="later"\n') / "harness-context",
          context_record("parked", "codex", old))
    result = doctor(catalog)
    assert result.stdout == ("advisory: alpha.running: context-stale: context reading is older than the horizon "
                             "(61m old) while desired state is running\n")


@pytest.mark.process
def test_an_unknown_observed_state_advises_while_running_and_a_fresh_one_is_silent(catalog: Path) -> None:
    write(seat(catalog, "gone") / "harness-state", state_record("gone", "idle", NOW_MS - 16 * MINUTE_MS))
    write(seat(catalog, "here") / "harness-state", state_record("here", "idle", NOW_MS - 1000))
    result = doctor(catalog)
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
    assert result.stdout == ("advisory: alpha.failing: driver-diagnostic: opencode driver failed at stage readBack: "
                             "notDurable (source messageReadBack, evidence 3s old); recovery: clearsOnStageRecovery\n")


@pytest.mark.process
def test_a_catalog_without_a_supervisor_only_advises_about_it(catalog: Path) -> None:
    (catalog / "agents" / "alpha").mkdir()
    result = run_st2("doctor", "--host", "alpha", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert (result.returncode, result.stdout) == (
        0, f"advisory: supervisor: supervisor-running: no `st2 up` is running for {catalog} on alpha\n")


@pytest.mark.process
def test_a_broken_declaration_is_a_failure(catalog: Path) -> None:
    broken = catalog / "agents" / "alpha" / "broken"
    broken.mkdir(parents=True)
    (broken / "agent.kdl").write_text('agent "broken" {\n    bogus-node 1\n}\n')
    result = run_st2("doctor", "--host", "alpha", env=st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS)))
    assert result.returncode == 1
    assert "failure: catalog: declaration: " in result.stdout
    assert "agent.kdl:2:5" in result.stdout
