"""The liveness hook in process: the seven-arm verdict table over stub readers, the reader's
resolution, and full log lines under a FakeClock."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from delegation_support import CONTINUING, PAYLOAD, hermetic_env, knob_file, write_by_child
from st2.base.clock import FakeClock
from st2.kit.delegation import reader_spawn
from st2.drivers.claude.hooks import subagent_stop_liveness as liveness_hook
from st2.kit.delegation.reader_spawn import Outcome


@pytest.mark.parametrize(
    ("outcome", "records", "verdict"),
    [
        (None, 0, "unavailable"),
        (None, 3, "unavailable"),
        (Outcome(spawn_error="Text file busy (os error 26)"), 1, "unstarted"),
        (Outcome(exit_status=0), 2, "green"),
        (Outcome(exit_status=1), 1, "red"),
        (Outcome(exit_status=2), 1, "corrupt"),
        (Outcome(exit_status=2), 0, "unresolved"),
        (Outcome(exit_status=3), 0, "error"),
        (Outcome(exit_status=124), 1, "error"),
        (Outcome(), 0, "error"),
    ],
)
def test_the_exit_class_maps_onto_seven_verdicts(outcome, records: int, verdict: str) -> None:
    assert liveness_hook.verdict_of(outcome, records) == verdict


def stub(tmp_path: Path, code: int) -> str:
    return str(write_by_child(tmp_path / f"reader-{code}.sh", f"#!/bin/sh\nexit {code}\n", executable=True))


def fire(tmp_path: Path, payload: str, **env: str) -> liveness_hook.Firing:
    """One in-process firing; a ``DELEGATION_KIT_LIVENESS_CMD`` given here goes into a knob file."""
    command = env.pop("DELEGATION_KIT_LIVENESS_CMD", None)
    if command is not None:
        beside = tmp_path.with_name(tmp_path.name + "-liveness.knobs")   # cwd may be absent on purpose
        env.update(knob_file(beside, DELEGATION_KIT_LIVENESS_CMD=command))
    return liveness_hook.fire(payload, hermetic_env(**env), str(tmp_path), FakeClock(wall_ms=1_788_000_000_000))


LINE = "2026-08-29T10:40:00Z  event=SubagentStop  session=s-1  live={live}  verdict={verdict}  spawn=-  records={records}  runs={runs}  decision={decision}  keys=hook_event_name,session_id,stop_hook_active\n"


@pytest.mark.process
@pytest.mark.parametrize(
    ("code", "with_record", "payload", "verdict", "decision"),
    [
        (0, False, PAYLOAD, "green", "allow"),
        (1, True, PAYLOAD, "red", "refuse"),
        (1, True, CONTINUING, "red", "refuse"),
        (2, True, PAYLOAD, "corrupt", "refuse"),
        (2, True, CONTINUING, "corrupt", "refuse"),
        (2, False, PAYLOAD, "unresolved", "refuse"),
        (2, False, CONTINUING, "unresolved", "allow"),
        (5, True, PAYLOAD, "error", "allow"),
    ],
)
def test_each_stub_exit_class_decides_and_logs(tmp_path: Path, code, with_record, payload, verdict, decision) -> None:
    if with_record:
        (tmp_path / ".tmp").mkdir()
        (tmp_path / ".tmp" / "k.run").write_text("pid=1 run=k\n")
    firing = fire(tmp_path, payload, DELEGATION_KIT_LIVENESS_CMD=stub(tmp_path, code))
    assert firing.line == LINE.format(
        live="yes" if verdict == "red" else "no", verdict=verdict,
        records=1 if with_record else 0, runs="k" if with_record else "-", decision=decision,
    )
    assert (tmp_path / ".workflow" / "subagent-stop-liveness.log").read_text() == firing.line
    assert firing.code == (2 if decision == "refuse" else 0)
    assert firing.stdout == ""
    if decision == "allow":
        assert firing.stderr == ""
    else:
        arm = {
            "red": "names a live producer",
            "corrupt": "does not parse",
            "unresolved": "the liveness reader produced no reading",
        }[verdict]
        assert arm in firing.stderr and "this turn may not end on it" in firing.stderr
        assert f"Run `{stub(tmp_path, code)} {tmp_path}/.tmp`" in firing.stderr


@pytest.mark.process
def test_the_task_arm_refuses_beside_every_non_refusing_verdict_and_ignores_stop_hook_active(tmp_path: Path) -> None:
    payload = json.dumps({"stop_hook_active": True, "background_tasks": [{"id": "t1", "type": "shell", "status": "running"}]})
    for env in (
        {"DELEGATION_KIT_LIVENESS_CMD": stub(tmp_path, 0)},
        {"DELEGATION_KIT_LIVENESS_CMD": "/nonexistent/reader"},
        {"DELEGATION_KIT_LIVENESS_CMD": stub(tmp_path, 9)},
    ):
        firing = fire(tmp_path, payload, **env)
        assert firing.code == 2, firing.line
        assert "decision=refuse" in firing.line
        assert firing.stderr.startswith("subagent-stop-liveness: turn-end refused: the harness's task view")


@pytest.mark.process
def test_a_helper_firing_allows_even_on_the_task_arm(tmp_path: Path) -> None:
    payload = json.dumps({
        "agent_type": "", "agent_id": "h1", "agent_transcript_path": str(tmp_path / "absent.jsonl"),
        "background_tasks": [{"id": "t1", "type": "shell", "status": "running"}],
    })
    firing = fire(tmp_path, payload, DELEGATION_KIT_LIVENESS_CMD=stub(tmp_path, 0))
    assert (firing.code, firing.stderr) == (0, "")


def test_the_empty_knob_resolves_to_the_running_st2_and_the_gate_name() -> None:
    root = str(Path(__file__).resolve().parents[3])
    reader = reader_spawn.resolve([], ".tmp", {"PATH": "", "PYTHONPATH": "/extra"})
    assert reader.argv == (sys.executable, "-S", "-P", "-m", "st2", "check", "producer-liveness", ".tmp")
    assert reader.executable == sys.executable
    assert reader.environment == (("PYTHONPATH", f"{root}:/extra"),)
    assert reader.command_line() == f"PYTHONPATH={root}:/extra {sys.executable} -S -P -m st2 check producer-liveness .tmp"


@pytest.mark.process
def test_an_override_resolves_to_itself_with_the_run_dir_appended(tmp_path: Path) -> None:
    reader = stub(tmp_path, 0)
    assert reader_spawn.resolve([reader, "--quiet"], "/r", {}) == reader_spawn.Reader((reader, "--quiet", "/r"), reader)
    assert reader_spawn.resolve([reader], "/r", {}).command_line() == f"{reader} /r"


@pytest.mark.process
def test_an_interpreter_led_override_resolves_on_path(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    interpreter = write_by_child(tmp_path / "bin" / "myinterp", "#!/bin/sh\n", executable=True)
    reader = reader_spawn.resolve(["myinterp", "reader.py"], ".tmp", {"PATH": f"/nonexistent:{tmp_path / 'bin'}"})
    assert (reader.argv, reader.executable) == (("myinterp", "reader.py", ".tmp"), str(interpreter))


@pytest.mark.process
@pytest.mark.parametrize("name", ["no-such-program-anywhere", "/nonexistent/reader", "LACKS_BIT"])
def test_an_override_that_is_not_executable_resolves_to_no_reader(tmp_path: Path, name: str) -> None:
    if name == "LACKS_BIT":
        name = str(write_by_child(tmp_path / "reader.sh", "#!/bin/sh\nexit 0\n"))
    assert reader_spawn.resolve([name], ".tmp", {"PATH": str(tmp_path)}) is None


def test_a_directory_is_not_an_executable_override(tmp_path: Path) -> None:
    assert reader_spawn.resolve([str(tmp_path)], ".tmp", {}) is None


@pytest.mark.process
def test_the_real_default_reader_answers_green_and_red(tmp_path: Path, children) -> None:
    (tmp_path / ".tmp").mkdir()
    assert reader_spawn.run_bounded(reader_spawn.resolve([], str(tmp_path / ".tmp"), {}), hermetic_env(), 30) == Outcome(exit_status=0)
    live = children.sleeper()
    (tmp_path / ".tmp" / "x.run").write_text(f"pid={live.pid} run=x\n")
    assert reader_spawn.run_bounded(reader_spawn.resolve([], str(tmp_path / ".tmp"), {}), hermetic_env(), 30) == Outcome(exit_status=1)


@pytest.mark.process
def test_the_forked_default_reader_answers_as_the_command_it_prints(tmp_path: Path, children) -> None:
    """The default reader runs in a child forked from the hook; the argv its refusal prints,
    spawned, reads every record set to the same exit class (green 0, red 1, corrupt 2)."""
    run_dir = tmp_path / ".tmp"
    run_dir.mkdir()
    forked = reader_spawn.resolve([], str(run_dir), {})
    spawned = forked._replace(st2_words=())  # the printed command, exec'd
    assert forked.st2_words == ("check", "producer-liveness", str(run_dir))

    def both() -> list[Outcome]:
        return [reader_spawn.run_bounded(reader, hermetic_env(), 30) for reader in (forked, spawned)]

    assert both() == [Outcome(exit_status=0)] * 2
    (run_dir / "x.run").write_text(f"pid={children.sleeper().pid} run=x\n")
    assert both() == [Outcome(exit_status=1)] * 2
    (run_dir / "x.run").write_text("not a launch record\n")
    assert both() == [Outcome(exit_status=2)] * 2


@pytest.mark.process
def test_a_reader_killed_by_a_signal_is_an_error(tmp_path: Path) -> None:
    reader = write_by_child(tmp_path / "r.sh", "#!/bin/sh\nkill -9 $$\n", executable=True)
    assert reader_spawn.run_bounded(reader_spawn.Reader((str(reader),), str(reader)), hermetic_env(), 30) == Outcome()


def test_an_invalid_bound_falls_back_to_the_default() -> None:
    assert reader_spawn.bound_seconds({}) == 10.0
    assert reader_spawn.bound_seconds({"ST2_LIVENESS_READER_BOUND_SECONDS": "soon"}) == 10.0
    assert reader_spawn.bound_seconds({"ST2_LIVENESS_READER_BOUND_SECONDS": "-1"}) == 10.0
    assert reader_spawn.bound_seconds({"ST2_LIVENESS_READER_BOUND_SECONDS": "0.5"}) == 0.5


@pytest.mark.process
def test_a_record_appearing_during_the_reading_is_counted_so_exit_2_reads_corrupt(tmp_path: Path) -> None:
    creating = write_by_child(
        tmp_path / "creating-reader.sh", '#!/bin/sh\nmkdir -p "$1" && echo "pid=1 run=late" > "$1/late.run"\nexit 2\n', executable=True
    )
    firing = fire(tmp_path, PAYLOAD, DELEGATION_KIT_LIVENESS_CMD=str(creating))
    assert "verdict=corrupt  spawn=-  records=1  runs=late  decision=refuse" in firing.line
    quiet = fire(tmp_path / "elsewhere", PAYLOAD, DELEGATION_KIT_LIVENESS_CMD=stub(tmp_path, 2))
    assert "verdict=unresolved  spawn=-  records=0  runs=-  decision=refuse" in quiet.line


@pytest.mark.process
def test_no_value_of_the_view_or_the_transcript_reaches_the_log(tmp_path: Path) -> None:
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text('{"backgroundTaskId":"t-secret-id","command":"rm -rf secret-dir"}\n')
    payload = json.dumps({
        "session_id": "s-1", "hook_event_name": "SubagentStop", "agent_id": "agent-secret",
        "agent_type": "secret-type", "agent_transcript_path": str(transcript),
        "last_assistant_message": "secret report", "transcript_path": "/secret/path",
        "background_tasks": [{"id": "t-secret-id", "type": "shell", "status": "running",
                              "command": "make secret-target", "description": "secret prose"}],
    })
    firing = fire(tmp_path, payload, DELEGATION_KIT_LIVENESS_CMD=stub(tmp_path, 0))
    assert firing.code == 2
    assert "secret" not in firing.line and "secret" not in firing.stderr
    assert firing.line.endswith(
        "decision=refuse  keys=agent_id,agent_transcript_path,agent_type,background_tasks,hook_event_name,"
        "last_assistant_message,session_id,transcript_path\n"
    )


@pytest.mark.process
def test_without_pidfd_the_bounded_wait_still_reads_the_exit_and_the_bound(tmp_path: Path, monkeypatch) -> None:
    def no_pidfd(pid):
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(reader_spawn.os, "pidfd_open", no_pidfd)
    quick = reader_spawn.Reader((stub(tmp_path, 1),), stub(tmp_path, 1))
    assert reader_spawn.run_bounded(quick, hermetic_env(), 30) == Outcome(exit_status=1)
    hung = write_by_child(tmp_path / "hung.sh", "#!/bin/sh\nexec sleep 30\n", executable=True)
    assert reader_spawn.run_bounded(reader_spawn.Reader((str(hung),), str(hung)), hermetic_env(), 0.3) == Outcome()
