"""A FIFO, a device or a huge file planted where st2 expects a small regular file never hangs a
command, never reaches a traceback and reads as absent/unknown/unreadable; the same places
holding a regular file read normally. Through the real CLI, each with a hard timeout."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from support import run_st2, st2_env

pytestmark = pytest.mark.process

HOST = "h"
MESSAGE = "1788000000000-abcdef.md"
BOUND_SECONDS = 20  # far above a normal run; a blocked open() would never return


def seat(catalog: Path, identity: str = "w") -> Path:
    directory = catalog / "agents" / HOST / identity
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "resources" / "archive").mkdir(parents=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh" "-c" "true"\n}}\n')
    return directory


def st2(catalog: Path, *args: str, **env: str):
    started = time.monotonic()
    result = run_st2(*args, "--host", HOST, env=st2_env(catalog, **env), timeout=BOUND_SECONDS, input="")
    assert time.monotonic() - started < BOUND_SECONDS
    assert "Traceback" not in result.stderr, result.stderr
    return result


def st2_global(catalog: Path, *args: str, **env: str):
    result = run_st2(*args, env=st2_env(catalog, **env), timeout=BOUND_SECONDS, input="")
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_a_fifo_in_an_inbox_never_hangs_message_ls_read_or_thread(catalog: Path) -> None:
    box = seat(catalog) / "resources" / "inbox"
    os.mkfifo(box / MESSAGE)
    listed = st2(catalog, "message", "ls", "--as", "h.w", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    read = st2(catalog, "message", "read", MESSAGE, "--as", "h.w")
    assert read.returncode == 1 and "FIFO" in read.stderr and "not read" in read.stderr, read.stderr
    thread = st2(catalog, "message", "thread", MESSAGE)
    assert thread.returncode == 1


def test_a_regular_message_in_the_same_place_reads(catalog: Path) -> None:
    box = seat(catalog) / "resources" / "inbox"
    (box / MESSAGE).write_text("---\nfrom: h.x\nsubject: hello\n---\nbody\n")
    listed = json.loads(st2(catalog, "message", "ls", "--as", "h.w", "--json").stdout)
    assert [row["subject"] for row in listed] == ["hello"]
    assert "body" in st2(catalog, "message", "read", MESSAGE, "--as", "h.w").stdout


def test_a_huge_hand_dropped_message_is_refused_not_printed(catalog: Path) -> None:
    box = seat(catalog) / "resources" / "inbox"
    with open(box / MESSAGE, "wb") as handle:  # sparse: 200 MB of size, no disk
        handle.write(b"---\nfrom: h.x\nsubject: big\n---\n")
        handle.truncate(200 * 1024 * 1024)
    started = time.monotonic()
    read = st2(catalog, "message", "read", MESSAGE, "--as", "h.w")
    assert time.monotonic() - started < 5
    assert read.returncode == 1 and "bound" in read.stderr and read.stdout == ""


@pytest.mark.parametrize("record", ["status", "harness-state", "harness-context", "driver-diagnostic"])
def test_a_fifo_record_never_hangs_agents_or_record_show(catalog: Path, record: str) -> None:
    os.mkfifo(seat(catalog) / record)
    roster = st2(catalog, "agents", "--json")
    assert roster.returncode == 0, roster.stderr
    row = json.loads(roster.stdout)[0]
    if record == "harness-state":
        assert row["observedState"]["state"] == "unknown" and row["observedState"]["reason"] == "unreadable-record"
    if record == "harness-context":
        assert row["context"] is None
    if record == "status":
        assert row["status"] == "offline"
    if record == "driver-diagnostic":
        assert row["driverDiagnostic"]["status"] == "indeterminate"
    shown = st2(catalog, "record", "show", "w")
    assert shown.returncode == 0 and "unreadable" in shown.stdout
    assert st2(catalog, "doctor").returncode in (0, 1)


def test_a_fifo_usage_snapshot_is_stale_for_the_verdict_and_advises_in_the_budget_guard(tmp_path: Path, catalog: Path) -> None:
    snapshot = tmp_path / "usage.txt"
    os.mkfifo(snapshot)
    env = {"DELEGATION_KIT_USAGE_FILE": str(snapshot), "DELEGATION_KIT_USAGE_HISTORY": str(tmp_path / "h.log")}
    verdict = st2_global(catalog, "usage", "verdict", **env)
    assert verdict.returncode == 2 and "STALE" in verdict.stdout, verdict
    guard = st2_global(catalog, "hook", "budget-guard", **env)
    assert guard.returncode == 0 and "STALE" in guard.stdout, guard


@pytest.mark.parametrize("declaration", ["catalog.kdl", "agent.kdl"])
def test_a_fifo_declaration_never_hangs_validate(catalog: Path, declaration: str) -> None:
    directory = seat(catalog)
    target = catalog / "catalog.kdl" if declaration == "catalog.kdl" else directory / "agent.kdl"
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    result = st2(catalog, "validate")
    assert result.returncode == 1
    assert ("unreadable-declaration" in result.stdout and "FIFO" in result.stdout) or (
        "declaration-not-regular" in result.stdout), result.stdout
    assert st2(catalog, "agents").returncode == 0
    assert st2(catalog, "tasks").returncode in (0, 1)
