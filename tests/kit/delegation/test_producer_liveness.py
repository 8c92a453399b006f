"""`st2 check producer-liveness`: set mode, single record, exit classes 0/1/2, --record."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from delegation_support import hermetic_env
from st2.kit.delegation import process_liveness, producer_liveness
from st2.kit.delegation.launch_record import parse


def check(cwd: Path, *args: str, via_click: bool = False, **env: str) -> subprocess.CompletedProcess:
    prefix = ["--host", "h"] if via_click else []
    return subprocess.run(
        [sys.executable, "-m", "st2", *prefix, "check", "producer-liveness", *args],
        capture_output=True, text=True, cwd=cwd, env=hermetic_env(**env), timeout=60,
    )


def test_an_empty_or_absent_set_is_green(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    assert producer_liveness.read_path(str(tmp_path / "runs")).lines() == [
        "check-producer-liveness: clean (0 records, no live producer)"
    ]
    absent = producer_liveness.read_path(str(tmp_path / "never-created"))
    assert (absent.status, absent.records) == (0, 0)


@pytest.mark.process
def test_exited_producers_are_green_with_their_count(tmp_path: Path, children) -> None:
    for key in ("a", "b"):
        (tmp_path / f"{key}.run").write_text(f"pid={children.exited()} run={key}\n")
    (tmp_path / "notes.txt").write_text("not a record")
    (tmp_path / "dir.run").mkdir()
    reading = producer_liveness.read_path(str(tmp_path))
    assert (reading.status, reading.lines()) == (0, ["check-producer-liveness: clean (2 records, no live producer)"])


@pytest.mark.process
def test_a_live_producer_is_red_with_one_finding_per_live_record(tmp_path: Path, children) -> None:
    live = children.sleeper()
    (tmp_path / "live.run").write_text(f"pid={live.pid} run=live\n")
    (tmp_path / "old.run").write_text(f"pid={children.exited()} run=old\n")
    reading = producer_liveness.read_path(str(tmp_path))
    assert reading.status == 1
    assert reading.lines() == [
        f"check-producer-liveness: {tmp_path}/live.run: pid={live.pid} run=live names a live producer",
        f"help: wait for it on its own artifact (while kill -0 {live.pid} 2>/dev/null; do sleep 5; done), "
        "or delete the record once the producer has exited",
    ]


@pytest.mark.process
def test_a_malformed_record_wins_over_red(tmp_path: Path, children) -> None:
    live = children.sleeper()
    (tmp_path / "a-live.run").write_text(f"pid={live.pid} run=a-live\n")
    (tmp_path / "b-bad.run").write_text("pid=oops run=b-bad\n")
    reading = producer_liveness.read_path(str(tmp_path))
    assert reading.status == 2
    assert reading.lines()[2] == f"check-producer-liveness: {tmp_path}/b-bad.run: does not parse: pid=oops is not a positive process id"


def test_a_record_that_cannot_be_read_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "dangling.run").symlink_to(tmp_path / "gone")
    reading = producer_liveness.read_path(str(tmp_path))
    assert reading.status == 2
    assert reading.lines()[0] == f"check-producer-liveness: {tmp_path}/dangling.run: cannot be read: No such file or directory"


def test_a_directory_that_cannot_be_listed_is_exit_2(tmp_path: Path, monkeypatch) -> None:
    def refuse(path):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(producer_liveness.os, "listdir", refuse)
    reading = producer_liveness.read_path(str(tmp_path))
    assert (reading.status, reading.lines()) == (
        2, [f"check-producer-liveness: {tmp_path}: the directory cannot be read: Permission denied"]
    )


@pytest.mark.process
@pytest.mark.parametrize("via_click", [False, True], ids=["hot-path", "click"])
def test_the_cli_reads_one_record_and_a_set(tmp_path: Path, children, via_click: bool) -> None:
    live = children.sleeper()
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "job.run").write_text(f"pid={live.pid} run=job\n")
    red = check(tmp_path, ".tmp/job.run", via_click=via_click)
    assert (red.returncode, red.stdout.splitlines()[0]) == (
        1, f"check-producer-liveness: .tmp/job.run: pid={live.pid} run=job names a live producer"
    )
    live.kill()
    live.wait()
    green = check(tmp_path, ".tmp", via_click=via_click)
    assert (green.returncode, green.stdout) == (0, "check-producer-liveness: clean (1 record, no live producer)\n")


@pytest.mark.process
def test_record_writes_the_producer_with_its_start_time_atomically(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    result = check(tmp_path, "--record", "suite", "--pid", str(producer.pid))
    written = (tmp_path / ".tmp" / "suite.run").read_text()
    ticks = process_liveness.start_ticks(producer.pid)
    assert written == f"pid={producer.pid} run=suite start={ticks}\n"
    assert (result.returncode, result.stdout) == (0, f"check-producer-liveness: wrote .tmp/suite.run: {written}")
    assert sorted(os.listdir(tmp_path / ".tmp")) == ["suite.run"]
    assert check(tmp_path, ".tmp").returncode == 1
    assert parse(written).start == ticks


@pytest.mark.process
def test_record_for_an_exited_pid_writes_nothing(tmp_path: Path, children) -> None:
    pid = children.exited()
    result = check(tmp_path, "--record", "late", "--pid", str(pid))
    assert (result.returncode, result.stdout) == (
        0, f"check-producer-liveness: pid {pid} is not running; an exited producer owes no record, none written\n"
    )
    assert not (tmp_path / ".tmp" / "late.run").exists()


@pytest.mark.process
def test_record_defaults_to_the_calling_process_and_honours_the_scratch_knob(tmp_path: Path) -> None:
    # The launching shell is the default producer: sh runs st2 and then keeps running.
    script = f'"{sys.executable}" -m st2 check producer-liveness --record shell-job; cat "$0"'
    (tmp_path / "scratch").mkdir()
    result = subprocess.run(
        ["sh", "-c", script + "; echo $$ > shell.pid", str(tmp_path / "scratch" / "shell-job.run")],
        capture_output=True, text=True, cwd=tmp_path, env=hermetic_env(GATE_SDK_TMP_DIR="scratch"), timeout=60,
    )
    shell_pid = int((tmp_path / "shell.pid").read_text())
    assert result.returncode == 0, result.stderr
    assert parse(result.stdout.splitlines()[-1]).pid == shell_pid


@pytest.mark.process
@pytest.mark.parametrize(
    "args",
    [["--record", "../escape"], ["--record", "k", "--pid", "0"], ["--record", "k", "--pid", "9" * 5000],
     ["--record", "k", "--pid", "4194305"], ["--pid", "3", "runs"], ["--record", "k", "runs"], ["a", "b"], []],
    ids=["bad-key", "bad-pid", "pid-5000-digits", "pid-past-pid-max", "pid-without-record", "record-and-path",
         "two-paths", "nothing"],
)
def test_usage_errors_exit_2(tmp_path: Path, args) -> None:
    result = check(tmp_path, *args)
    assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout
    assert not (tmp_path / ".tmp").exists() or not list((tmp_path / ".tmp").iterdir())


@pytest.mark.process
@pytest.mark.parametrize("line, said", [
    ("pid=" + "9" * 5000 + " run=x", "pid=999999999999999999999... is not a positive process id"),
    ("pid=4194305 run=x", "pid=4194305 is not a positive process id"),
    ("pid=1 run=x start=" + "9" * 5000, "start=999999999999999999999... is not a count of clock ticks"),
    ("pid=1 run=x start=18446744073709551616", "start=18446744073709551616 is not a count of clock ticks"),
], ids=["pid-5000-digits", "pid-past-pid-max", "start-5000-digits", "start-past-u64"])
def test_a_number_no_process_can_carry_is_malformed_with_a_bounded_line(tmp_path: Path, line: str,
                                                                        said: str) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "x.run").write_text(line + "\n")
    result = check(tmp_path, "runs")
    assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout
    assert f"check-producer-liveness: runs/x.run: does not parse: {said}" in result.stdout + result.stderr
    assert max(len(text) for text in (result.stdout + result.stderr).splitlines()) < 300


def test_the_largest_process_id_and_tick_count_parse() -> None:
    assert parse("pid=4194304 run=x start=18446744073709551615\n") == (4194304, "x", 2**64 - 1)
