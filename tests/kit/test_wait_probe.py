"""The wait probe: its classification and report over written trials, its exit contract, a
recorded trial end to end with the real wait body, and a sweep that writes nothing tracked."""

from __future__ import annotations

import io
import os
import subprocess
import time
from pathlib import Path

import pytest

from kit_support import git, hermetic_environment, new_repository, run_st2
from st2.kit import wait_probe

ROSTER = wait_probe.ROSTER + "\n"


def probe(root: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = wait_probe.run(list(argv), environ={}, cwd=str(root), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(("exit_", "marker", "waiter", "alive", "expected"), [
    (0, 500, 520, False, "ok"),        # the waiter outlived its condition
    (0, 500, 500, True, "ok"),         # at the same millisecond is not early
    (143, None, 300, True, "reaped"),  # a signal exit with the producer alive
    (0, None, 30, True, "predicate"),  # a clean zero with the marker absent
    (0, 1691, 1043, True, "predicate"),  # the marker stamped after the waiter left, read when recorded
    (143, None, 300, False, "unexplained"),
    (1, None, 30, True, "unexplained"),
])
def test_classify_from_one_trials_tells(exit_, marker, waiter, alive, expected) -> None:
    assert wait_probe.classify(exit_, marker, waiter, alive) == expected


def write_trials(root: Path, *lines: str) -> None:
    evidence = root / ".workflow" / "wait-primitive-evidence.txt"
    evidence.parent.mkdir(parents=True, exist_ok=True)
    evidence.write_text("".join(line + "\n" for line in lines))


def trial(form, predicate, ms, cls) -> str:
    return (f"form={form} predicate={predicate} producer_ms={ms} waiter_exit=0 marker_at_ms=- waiter_at_ms=1 "
            f"producer_alive_at_exit=yes class={cls}")


def test_report_names_the_ceiling_and_the_predicate_shape(tmp_path) -> None:
    write_trials(tmp_path, trial("bg", "marker", 200, "ok"), trial("bg", "marker", 5000, "reaped"),
                 trial("bg", "liveness-until", 200, "predicate"), "a torn line")
    assert probe(tmp_path, "report") == (0, (
        "wait-probe: 3 trial(s) in 3 cell(s)\n"
        "  bg liveness-until 200ms: predicate=1\n"
        "  bg marker 200ms: ok=1\n"
        "  bg marker 5000ms: reaped=1\n"
        "ceiling: form bg (marker) fails only above 200ms (every shorter trial held)\n"
        "conclusion: 2 early exit(s), not all on the liveness predicate; read the cells\n"), "")
    write_trials(tmp_path, trial("local", "marker", 200, "ok"), trial("local", "liveness-until", 200, "predicate"))
    assert probe(tmp_path, "report")[1].endswith(
        "conclusion: predicate-shaped: every early exit tested the producer's liveness, none the completion marker\n")


def test_the_exit_contract(tmp_path) -> None:
    assert probe(tmp_path, "report") == (1, f"wait-probe: no trials recorded in {tmp_path}/.workflow/wait-primitive-evidence.txt\n", "")
    assert probe(tmp_path) == (2, "", "wait-probe: a subcommand is required\n" + ROSTER)
    assert probe(tmp_path, "launch") == (2, "", "wait-probe: unknown subcommand 'launch'\n" + ROSTER)
    assert probe(tmp_path, "produce", "k") == (2, "", "wait-probe: produce takes 2 operand(s), not 1\n" + ROSTER)
    assert probe(tmp_path, "produce", "k", "soon") == (2, "", "wait-probe: duration 'soon' is not a positive number of milliseconds\n" + ROSTER)
    assert probe(tmp_path, "record", "k", "bg") == (2, "", "wait-probe: trial k has no producer stamp or its waiter has not exited yet\n" + ROSTER)
    assert probe(tmp_path, "waiter", "../k", "marker")[0] == 2


def wait_for(path: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.02)


@pytest.mark.process
@pytest.mark.parametrize(("predicate", "expected"), [("marker", "ok"), ("liveness-until", "predicate")])
def test_a_recorded_trial_with_the_real_wait_body(tmp_path, sandbox, predicate, expected) -> None:
    environ = hermetic_environment(sandbox)
    produced = run_st2(["check", "wait-probe", "produce", "t1", "1500"], environ, cwd=tmp_path)
    assert produced.returncode == 0
    pid = int(produced.stdout.decode().split("pid=")[1])
    assert (tmp_path / ".tmp" / "t1.run").read_text() == f"pid={pid} run=t1\n"  # the launch record's contract
    armed = run_st2(["check", "wait-probe", "arm-local", "t1", predicate], environ, cwd=tmp_path)
    assert armed.returncode == 0 and armed.stdout.decode().startswith("wait-probe: armed t1 waiter pid=")
    wait_for(tmp_path / ".tmp" / "wait-probe" / "t1.waiter")
    recorded = run_st2(["check", "wait-probe", "record", "t1", "local"], environ, cwd=tmp_path)
    line = recorded.stdout.decode()
    assert recorded.returncode == 0 and line.startswith(f"form=local predicate={predicate} producer_ms=1500 waiter_exit=0 ")
    assert line.endswith(f" class={expected}\n")
    assert (tmp_path / ".workflow" / "wait-primitive-evidence.txt").read_text() == line
    from st2.kit.delegation.process_liveness import is_alive

    while is_alive(pid):  # the producer ends on its own after its declared duration
        time.sleep(0.02)


@pytest.mark.process
def test_a_sweep_writes_nothing_tracked(tmp_path, sandbox) -> None:
    repo = new_repository(tmp_path / "repo")
    (repo / "README.md").write_text("tracked\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    result = run_st2(["check", "wait-probe", "sweep"], hermetic_environment(sandbox), cwd=repo, timeout=240)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert len([line for line in lines if line.startswith("form=local ")]) == 9
    assert lines[-1] == "conclusion: predicate-shaped: every early exit tested the producer's liveness, none the completion marker"
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"], capture_output=True, text=True).stdout
    written = {line[3:].split("/")[0] for line in status.splitlines()}
    assert written == {".tmp", ".workflow"}  # nothing tracked changed; only scratch and capture
    assert not list((repo / ".tmp").glob("*.run"))  # each trial retired its record with its producer


@pytest.mark.process
def test_waiter_execs_into_the_wait_body(tmp_path, sandbox) -> None:
    import sys

    environ = hermetic_environment(sandbox)
    assert run_st2(["check", "wait-probe", "produce", "t2", "2000"], environ, cwd=tmp_path).returncode == 0
    waiter = subprocess.Popen([sys.executable, "-m", "st2", "check", "wait-probe", "waiter", "t2", "marker"], cwd=tmp_path,
                              env=environ | {"PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        deadline = time.monotonic() + 30
        comm = Path(f"/proc/{waiter.pid}/comm")
        while comm.read_text().strip() != "bash":  # same PID, now the shell: exec, not a spawned child
            assert time.monotonic() < deadline and waiter.poll() is None
            time.sleep(0.01)
        assert waiter.wait(timeout=30) == 0
    finally:
        if waiter.poll() is None:
            waiter.kill()
            waiter.wait()
    result = (tmp_path / ".tmp" / "wait-probe" / "t2.waiter").read_text().split()
    assert result[0] == "0" and result[2] in ("yes", "no")
    assert run_st2(["check", "wait-probe", "record", "t2", "exec"], environ, cwd=tmp_path).stdout.decode().endswith(" class=ok\n")
