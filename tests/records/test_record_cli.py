"""`st2 status` and `st2 record show` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "h1" / "worker"
    directory.mkdir(parents=True)
    return directory


def test_status_prints_sets_and_refuses_unknown(seat: Path, catalog: Path) -> None:
    assert run_st2("status", "h1.worker", catalog=catalog).stdout == "offline\n"
    result = run_st2("status", "h1.worker", "--set", "busy", catalog=catalog)
    assert (result.returncode, result.stdout) == (0, "status: busy\n")
    assert (seat / "status").read_text().startswith("busy\nv1 ")
    assert run_st2("status", "h1.worker", catalog=catalog).stdout == "busy\n"
    refused = run_st2("status", "h1.worker", "--set", "unknown", catalog=catalog)
    assert refused.returncode != 0
    assert "invalid state 'unknown' (settable: offline|available|busy|away|dnd)" in refused.stderr
    assert (seat / "status").read_text().startswith("busy\n")


def test_status_defaults_to_st_agent_then_as(seat: Path, catalog: Path) -> None:
    env = st2_env(catalog, ST_AGENT="h1.worker")
    assert run_st2("status", "--set", "away", env=env).returncode == 0
    assert run_st2("status", env=env).stdout == "away\n"
    assert run_st2("status", "--as", "h1.worker", catalog=catalog).stdout == "away\n"
    missing = run_st2("status", catalog=catalog)
    assert missing.returncode != 0 and "ST_AGENT" in missing.stderr


def test_status_of_an_unknown_seat_fails(catalog: Path) -> None:
    result = run_st2("status", "h1.nobody", catalog=catalog)
    assert result.returncode != 0 and "no agent" in result.stderr


def test_record_show_prints_raw_beside_projection(seat: Path, catalog: Path) -> None:
    (seat / "status").write_text("busy\nv1 1\n")
    (seat / "driver-diagnostic").write_text("{bad\n")
    result = run_st2("record", "show", "h1.worker", catalog=catalog)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["== status", 'raw:        "busy\\nv1 1\\n"',
                         'projection: {"presence":"unknown","form":"v1","reason":"stale"}']
    assert lines[3:6] == ["== harness-state", "raw:        (no record)", "projection: null"]
    assert lines[9:12] == ["== driver-diagnostic", "raw:        {bad",
                           'projection: ' + json.dumps({
                               "status": "indeterminate", "driver": None, "stage": None, "reason": "malformedRecord",
                               "source": None, "producerVersion": None, "support": "unknown", "observedAt": None,
                               "evidenceAgeMs": None, "recovery": "replaceWithValidRecordOrClearOnStageRecovery"},
                               separators=(",", ":"))]
    raw = run_st2("record", "show", "h1.worker", "--raw", catalog=catalog)
    assert not any(line.startswith("projection") for line in raw.stdout.splitlines())
