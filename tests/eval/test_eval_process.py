"""`st2 eval` through the real CLI with shell seats in real tmux: the example folder passes, a
failing judge fails, a malformed spec is refused at file:line:column, SIGINT tears the team down,
`supervise` relaunches a dead seat, and nothing the eval started outlives it (by PID and group)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from st2.eval.run import RUN_MARKER
from st2.process.marked import processes_carrying
from support import REPO, poll_for, st2_env

pytestmark = pytest.mark.process

EXAMPLE = REPO / "examples" / "benign"

# A worker that records its PID and process group beside the test, waits for the kickoff, writes
# its answer, replies to the requester and stays up; a background child in its group stays too.
WORKER = (
    'pids="{marks}/$ST_AGENT.pids"; echo "$$ $(ps -o pgid= $$ | tr -d \' \')" >> "$pids"; '
    'sleep 3600 & echo "$! child" >> "$pids"; '
    'inbox="$CATALOG/agents/t/worker/resources/inbox"; '
    'until [ -n "$(ls "$inbox")" ]; do sleep 0.1; done; '
    '{die}echo "$ANSWER" > "$CATALOG/out.txt"; st2 message reply "$(ls "$inbox" | head -n 1)" -m done; '
    'while :; do sleep 3600; done'
)


def spec_text(marks: Path, *, judge: str = 'file "out.txt" has "42"', supervise: bool = False, die: bool = False,
              timeout: str = "40s") -> str:
    # With `die`, the first life exits 3 once the kickoff is in; its relaunch finds the mark and works.
    die_line = f'[ -e "{marks}/died" ] || {{ touch "{marks}/died"; exit 3; }}; ' if die else ""
    command = WORKER.format(marks=marks, die=die_line).replace("\\", "\\\\").replace('"', '\\"')
    return (f'host "t"\nenv {{ ANSWER "42" }}\nagent "worker" {{\n    command "{command}"\n    ding\n}}\n'
            f'eval {{\n    message {{ from "requester"; to "worker"; content "answer" }}\n'
            f'    max-timeout "{timeout}"\n{"    supervise" if supervise else ""}\n'
            f'    run "echo" {{ command "echo step-$ANSWER > step.txt" }}\n'
            f'    judges {{\n        judge "answer" {{ {judge} }}\n'
            f'        judge "step" {{ exec "grep -q step-42 step.txt" }}\n    }}\n}}\n')


def st2_eval(*words: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "st2", "eval", *words], capture_output=True, text=True,
                          env=st2_env(), cwd=REPO, timeout=timeout)


def recorded(marks: Path) -> list[tuple[int, str]]:
    """(pid, "group id" or "child") lines every life of the worker wrote."""
    path = marks / "t.worker.pids"
    if not path.exists():
        return []
    return [(int(line.split()[0]), line.split()[1]) for line in path.read_text().splitlines() if line.strip()]


def live_members() -> dict[int, set[int]]:
    """Process group -> its live (not zombie) members. A zombie is dead: in a container whose PID 1
    does not reap, an orphan's zombie stays listed although nothing of it runs."""
    groups: dict[int, set[int]] = {}
    for word in os.listdir("/proc"):
        if not word.isdigit():
            continue
        try:
            fields = Path(f"/proc/{word}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            groups.setdefault(int(fields[2]), set()).add(int(word))
    return groups


def assert_nothing_left(marks: Path, kept: str) -> None:
    lives = recorded(marks)
    assert lives, "the worker never ran"
    groups = live_members()
    alive = set().union(*groups.values())
    for pid, group in lives:
        assert pid not in alive, f"pid {pid} outlived the eval"
        if group != "child":
            assert int(group) not in groups, f"process group {group} outlived the eval: {groups[int(group)]}"
    assert processes_carrying(RUN_MARKER, kept) == []


def test_the_example_folder_runs_to_a_pass() -> None:
    completed = st2_eval(str(EXAMPLE))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.splitlines() == [
        "team reported done",
        "PASS run log: exited 0",
        "PASS checks LICENSE is MIT: repo/LICENSE has 'Permission is hereby granted, free of charge'; "
        "repo/LICENSE lacks 'proprietary'",
        "PASS checks package.json says MIT: repo/package.json field 'license' is \"MIT\"",
        "PASS checks both are committed: repo/LICENSE is committed; repo/package.json is committed",
        "PASS exec two commits: exited 0",
        "verdict: pass (4/4 judges passed)"]


def test_a_passing_eval_prints_its_json_verdict_and_leaves_no_process(tmp_path: Path) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "eval.kdl").write_text(spec_text(tmp_path))
    completed = st2_eval(str(tmp_path / "e"), "--json", "--keep")
    verdict = json.loads(completed.stdout)
    kept = verdict["kept"]
    try:
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert completed.stdout == json.dumps({
            "schema": "st2.eval-verdict.v1", "spec": str(tmp_path / "e" / "eval.kdl"), "verdict": "pass",
            "done": True, "failure": None, "judges": [
                {"name": "echo", "kind": "run", "passed": True, "detail": "exited 0"},
                {"name": "answer", "kind": "checks", "passed": True, "detail": "out.txt has '42'"},
                {"name": "step", "kind": "exec", "passed": True, "detail": "exited 0"}],
            "leftover": 0, "kept": kept}, separators=(",", ":")) + "\n"
        # The catalog itself was the bus root: the reply sits in the flat principal's inbox.
        catalog = Path(kept) / "catalog"
        assert [path.name for path in catalog.iterdir() if path.is_dir()] and not (catalog / "bus").exists()
        assert len(list((catalog / "principals" / "t" / "requester" / "resources" / "inbox").iterdir())) == 1
        assert_nothing_left(tmp_path, kept)
    finally:
        shutil.rmtree(kept, ignore_errors=True)


def test_a_failing_judge_fails_the_verdict_with_exit_1(tmp_path: Path) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "eval.kdl").write_text(spec_text(tmp_path, judge='file "out.txt" lacks "42"'))
    completed = st2_eval(str(tmp_path / "e"))
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert completed.stdout.splitlines()[-3:] == [
        "FAIL checks answer: out.txt has '42'", "PASS exec step: exited 0", "verdict: fail (1/2 judges passed)"]


def test_a_malformed_spec_is_refused_at_file_line_column_before_anything_runs(tmp_path: Path) -> None:
    spec = tmp_path / "eval.kdl"
    spec.write_text(spec_text(tmp_path).replace('file "out.txt" has "42"', 'file "out.txt" holds "42"'))
    completed = st2_eval(str(spec))
    assert completed.returncode == 2 and completed.stdout == ""
    assert completed.stderr == (f'{spec}:13:26: error[invalid-value]: expected file "<path>" has|lacks "<text>"\n'
                                '  help: file "<path>" has|lacks "<text>"\n')
    assert recorded(tmp_path) == []


def test_sigint_tears_the_team_down_and_exits_130(tmp_path: Path) -> None:
    (tmp_path / "e").mkdir()
    # The worker never gets a kickoff it answers: the eval waits on it until interrupted.
    idle = (f'until [ -n \\"$(ls $CATALOG/agents/t/idle/resources/inbox)\\" ]; do sleep 0.1; done; '
            f'touch {tmp_path}/kicked; sleep 3600')
    (tmp_path / "e" / "eval.kdl").write_text(spec_text(tmp_path, timeout="300s").replace('to "worker"',
                                                                                          'to "idle"').replace(
        'agent "worker" {', f'agent "idle" {{ command "{idle}" }}\nagent "worker" {{'))
    process = subprocess.Popen([sys.executable, "-m", "st2", "eval", str(tmp_path / "e"), "--json", "--keep"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=st2_env(), cwd=REPO,
                               start_new_session=True)
    try:
        poll_for(lambda: recorded(tmp_path) and (tmp_path / "kicked").exists(), "the kickoff's arrival", timeout=60)
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    verdict = json.loads(out)
    try:
        assert process.returncode == 130, out + err
        assert (verdict["verdict"], verdict["done"], verdict["judges"]) == ("interrupted", False, [])
        assert_nothing_left(tmp_path, verdict["kept"])
    finally:
        shutil.rmtree(verdict["kept"], ignore_errors=True)


def test_supervise_relaunches_a_dead_seat_from_the_spec(tmp_path: Path) -> None:
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "eval.kdl").write_text(spec_text(tmp_path, supervise=True, die=True))
    completed = st2_eval(str(tmp_path / "e"), "--json")
    verdict = json.loads(completed.stdout)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert verdict["done"] is True and (tmp_path / "died").exists()
    assert len([group for _, group in recorded(tmp_path) if group != "child"]) == 2  # two lives
