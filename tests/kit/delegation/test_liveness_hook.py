"""The real `st2 hook subagent-stop-liveness` over temp scratch dirs: every verdict arm with a
firing and a non-firing case, every log field asserted (full line after the stamp)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from delegation_support import (
    CONTINUING,
    PAYLOAD,
    PAYLOAD_KEYS,
    assert_log_line,
    knob_file,
    log_lines,
    run_hook,
    write_by_child,
)
from st2.kit.delegation import process_liveness
from support import exits_within

pytestmark = pytest.mark.process

LOG = Path(".workflow/subagent-stop-liveness.log")
ROOT = Path(__file__).resolve().parents[3]


def fire(cwd: Path, payload: str | None = PAYLOAD, **env: str):
    """Fire the real hook from ``cwd``; a ``DELEGATION_KIT_LIVENESS_CMD`` given here (one element
    per line) is written into a knob file, its only spelling."""
    command = env.pop("DELEGATION_KIT_LIVENESS_CMD", None)
    if command is not None:
        env.update(knob_file(cwd / "liveness.knobs", DELEGATION_KIT_LIVENESS_CMD=command))
    result = run_hook("subagent-stop-liveness", cwd, payload, **env)
    lines = log_lines(cwd / LOG)
    return result, lines[-1] if lines else None


def record(cwd: Path, key: str, text: str) -> Path:
    (cwd / ".tmp").mkdir(exist_ok=True)
    path = cwd / ".tmp" / f"{key}.run"
    path.write_text(text)
    return path


def fields(verdict: str, decision: str, records: int = 0, runs: str = "-", live: str = "no",
           spawn: str = "-", keys: str = PAYLOAD_KEYS, event: str = "SubagentStop", session: str = "s-1") -> str:
    return (f"  event={event}  session={session}  live={live}  verdict={verdict}  spawn={spawn}"
            f"  records={records}  runs={runs}  decision={decision}  keys={keys}")


def test_an_empty_scratch_dir_reads_green_and_allows(tmp_path: Path) -> None:
    (tmp_path / ".tmp").mkdir()
    result, line = fire(tmp_path)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), line
    assert_log_line(line, fields("green", "allow"))


def test_a_record_naming_a_live_pid_reads_red_and_refuses(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path)
    assert result.returncode == 2, line
    assert_log_line(line, fields("red", "refuse", records=1, runs="producer", live="yes"))
    assert result.stdout == ""
    assert result.stderr == (
        f"subagent-stop-liveness: turn-end refused: a launch record under {tmp_path}/.tmp names a live producer, "
        "so this turn may not end on it. The record set read was runs=producer.\n"
        "Two ways forward: wait for the producer on its own artifact, in a loop that ends when its "
        "condition goes true (while kill -0 <pid> 2>/dev/null; do sleep 5; done, <pid> read out of the "
        "record); or delete the record once its producer has exited — retracting a statement that has "
        "become false, not a workaround.\n"
        f"Run `PYTHONPATH={ROOT} {sys.executable} -S -P -m st2 check producer-liveness {tmp_path}/.tmp` to see the record set for yourself.\n"
    )


def test_red_ignores_stop_hook_active(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path, CONTINUING)
    assert result.returncode == 2, line
    assert_log_line(line, fields("red", "refuse", records=1, runs="producer", live="yes"))


def test_a_record_of_an_exited_pid_reads_green(tmp_path: Path, children) -> None:
    record(tmp_path, "finished", f"pid={children.exited()} run=finished\n")
    result, line = fire(tmp_path)
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("green", "allow", records=1, runs="finished"))


def test_a_record_whose_pid_was_reused_reads_green(tmp_path: Path, children) -> None:
    stranger = children.sleeper()
    ticks = process_liveness.start_ticks(stranger.pid)
    record(tmp_path, "reused", f"pid={stranger.pid} run=reused start={ticks + 1}\n")
    result, line = fire(tmp_path)
    assert result.returncode == 0, line
    assert_log_line(line, fields("green", "allow", records=1, runs="reused"))


def test_a_malformed_record_reads_corrupt_and_refuses(tmp_path: Path, children) -> None:
    record(tmp_path, "broken", "pid=12 run\n")
    record(tmp_path, "finished", f"pid={children.exited()} run=finished\n")
    result, line = fire(tmp_path, CONTINUING)
    assert result.returncode == 2, line
    assert_log_line(line, fields("corrupt", "refuse", records=2, runs="broken,finished", keys=PAYLOAD_KEYS))
    assert result.stderr.startswith(
        f"subagent-stop-liveness: turn-end refused: a launch record under {tmp_path}/.tmp does not parse, so no "
        "reading says whether a producer is live and this turn may not end on it. The record set read "
        "was runs=broken,finished.\n"
    )
    assert result.stderr.endswith(f"Run `PYTHONPATH={ROOT} {sys.executable} -S -P -m st2 check producer-liveness {tmp_path}/.tmp` to see which record is malformed.\n")


def test_an_override_resolving_to_nothing_reads_unavailable_and_allows(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD="/nonexistent/liveness-reader")
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("unavailable", "allow", records=1, runs="producer"))


def test_an_override_without_the_execute_bit_reads_unavailable(tmp_path: Path) -> None:
    reader = write_by_child(tmp_path / "reader.sh", "#!/bin/sh\nexit 0\n", executable=False)
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert result.returncode == 0, line
    assert_log_line(line, fields("unavailable", "allow"))


def test_an_override_the_os_cannot_start_reads_unstarted_with_its_spawn_error(tmp_path: Path) -> None:
    reader = write_by_child(tmp_path / "reader.sh", "#!/nonexistent/interpreter\nexit 1\n", executable=True)
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("unstarted", "allow", spawn="No_such_file_or_directory_(os_error_2)"))


def test_a_startable_override_has_no_spawn_token(tmp_path: Path) -> None:
    reader = write_by_child(tmp_path / "reader.sh", "#!/bin/sh\nexit 0\n", executable=True)
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert result.returncode == 0, line
    assert_log_line(line, fields("green", "allow"))


def test_an_override_exiting_2_over_an_empty_dir_is_unresolved_and_refuses_once(tmp_path: Path) -> None:
    reader = write_by_child(tmp_path / "mute-reader.sh", "#!/bin/sh\nexit 2\n", executable=True)
    first, first_line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert first.returncode == 2, first_line
    assert_log_line(first_line, fields("unresolved", "refuse"))
    assert first.stderr == (
        "subagent-stop-liveness: turn-end refused: the liveness reader produced no reading, and there is "
        f"no launch record under {tmp_path}/.tmp for it to have been about, so nothing says whether a producer is "
        "live and this turn may not end on it.\n"
        "The reader is what to fix here, not a record: it failed over an empty record set, so it could "
        "not run at all. Under a worktree-isolated dispatch a reader that resolves only in the main "
        "checkout cannot run (templates/agent-execution.md); the lawful response there is to report the "
        "gate unavailable and return, never to build one.\n"
        f"Run `{reader} {tmp_path}/.tmp` to see the reader's own reason for failing.\n"
    )
    second, second_line = fire(tmp_path, CONTINUING, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert (second.returncode, second.stderr) == (0, ""), second_line
    assert_log_line(second_line, fields("unresolved", "allow"))


def test_an_interpreter_led_override_resolves_on_path_and_gets_the_run_dir(tmp_path: Path) -> None:
    # The reader records its argv, proving the run dir is appended after the last element.
    script = write_by_child(tmp_path / "reader.sh", 'printf "%s\\n" "$@" > argv.txt\nexit 0\n')
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=f"sh\n{script}\n--flag\n")
    assert result.returncode == 0, line
    assert_log_line(line, fields("green", "allow"))
    assert (tmp_path / "argv.txt").read_text() == f"--flag\n{tmp_path}/.tmp\n"


def test_a_hung_override_reads_error_after_the_bound_and_its_group_is_ended(tmp_path: Path) -> None:
    reader = write_by_child(
        tmp_path / "hung-reader.sh", '#!/bin/sh\necho $$ > hung.pid\nsleep 60 & echo $! > child.pid\nwait\n', executable=True
    )
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader), ST2_LIVENESS_READER_BOUND_SECONDS="1")
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("error", "allow"))
    # The reader itself was reaped by the hook; its background child was sent SIGKILL with the
    # group but is nobody's child here, so it exits when the kernel next runs it: wait for that
    # exit (its pidfd), bounded far below the child's own 60 s.
    assert not process_liveness.is_alive(int((tmp_path / "hung.pid").read_text()))
    assert exits_within(int((tmp_path / "child.pid").read_text()), 10.0), "child.pid"



def test_an_unmapped_exit_reads_error_and_allows(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    reader = write_by_child(tmp_path / "reader.sh", "#!/bin/sh\nexit 3\n", executable=True)
    result, line = fire(tmp_path, DELEGATION_KIT_LIVENESS_CMD=str(reader))
    assert result.returncode == 0, line
    assert_log_line(line, fields("error", "allow", records=1, runs="producer"))


def test_an_unparseable_payload_loses_only_event_session_and_keys(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path, "{not json")
    assert result.returncode == 2, line
    assert_log_line(line, fields("red", "refuse", records=1, runs="producer", live="yes", event="-", session="-", keys="-"))


def test_payload_values_never_split_the_line(tmp_path: Path) -> None:
    payload = json.dumps({"session_id": "a b\tc", "hook_event_name": "Subagent\nStop", "extra key": 1})
    result, line = fire(tmp_path, payload)
    assert result.returncode == 0, line
    assert_log_line(line, fields("green", "allow", event="Subagent_Stop", session="a_b_c", keys="extra_key,hook_event_name,session_id"))


def test_a_malformed_knob_declines_loudly_and_allows(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path, DELEGATION_KIT_REQUIRE_TIER="sometimes")
    assert (result.returncode, result.stderr, line) == (0, "", None)
    assert json.loads(result.stdout) == {
        "systemMessage": "subagent-stop-liveness: this turn end went unguarded — the delegation knobs are "
        "malformed: environment DELEGATION_KIT_REQUIRE_TIER='sometimes' must be on or off"
    }


def test_the_log_path_knob_is_honoured(tmp_path: Path) -> None:
    result = run_hook("subagent-stop-liveness", tmp_path, PAYLOAD, DELEGATION_KIT_STOP_LOG="logs/stop.log")
    assert result.returncode == 0
    (line,) = log_lines(tmp_path / "logs" / "stop.log")
    assert_log_line(line, fields("green", "allow"))
    assert not (tmp_path / LOG).exists()


def transcript_payload(tmp_path: Path, transcript_text: str | None, view, **extra) -> str:
    transcript = tmp_path / "agent-a1.jsonl"
    if transcript_text is not None:
        transcript.write_text(transcript_text)
    payload = {
        "session_id": "s-1", "hook_event_name": "SubagentStop", "stop_hook_active": True,
        "agent_id": "a1", "agent_type": "worker", "agent_transcript_path": str(transcript),
        "background_tasks": view,
    }
    payload.update(extra)
    return json.dumps(payload)


TASK_KEYS = "agent_id,agent_transcript_path,agent_type,background_tasks,hook_event_name,session_id,stop_hook_active"


def test_an_own_running_shell_task_refuses_beside_green(tmp_path: Path) -> None:
    view = [{"id": "b7x2k", "type": "shell", "status": "running", "description": "suite"}]
    payload = transcript_payload(tmp_path, '{"backgroundTaskId":"b7x2k"}\n', view)
    result, line = fire(tmp_path, payload)
    assert result.returncode == 2, line
    assert_log_line(line, fields("green", "refuse", keys=TASK_KEYS))
    assert result.stderr.startswith(
        "subagent-stop-liveness: turn-end refused: the harness's task view shows a shell task this "
        "session launched still running, so this turn may not end on it.\n"
    )
    assert "await the task's completion notification" in result.stderr


def test_a_foreign_running_shell_task_allows(tmp_path: Path) -> None:
    view = [{"id": "b7x2k", "type": "shell", "status": "running", "description": "dispatcher's wait"}]
    payload = transcript_payload(tmp_path, '{"backgroundTaskId":"b7x2k9"}\n', view)
    result, line = fire(tmp_path, payload)
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("green", "allow", keys=TASK_KEYS))


def test_an_unreadable_transcript_counts_every_running_shell_element(tmp_path: Path) -> None:
    view = [{"id": "b7x2k", "type": "shell", "status": "running", "description": "x"}]
    payload = transcript_payload(tmp_path, None, view)
    result, line = fire(tmp_path, payload)
    assert result.returncode == 2, line
    assert_log_line(line, fields("green", "refuse", keys=TASK_KEYS))


def helper_payload(tmp_path: Path, **overrides) -> str:
    payload = {
        "session_id": "s-1", "hook_event_name": "SubagentStop", "stop_hook_active": False,
        "agent_id": "a9f1", "agent_type": "",
        "agent_transcript_path": str(tmp_path / "no-such" / "agent-a9f1.jsonl"),
        "background_tasks": [],
    }
    payload.update(overrides)
    return json.dumps({key: value for key, value in payload.items() if value is not None})


HELPER_KEYS = "agent_id,agent_transcript_path,agent_type,background_tasks,hook_event_name,session_id,stop_hook_active"


def test_a_helper_firing_allows_beside_red(tmp_path: Path, children) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    result, line = fire(tmp_path, helper_payload(tmp_path))
    assert (result.returncode, result.stderr) == (0, ""), line
    assert_log_line(line, fields("red", "allow", records=1, runs="producer", live="yes", keys=HELPER_KEYS))


@pytest.mark.parametrize(
    "overrides",
    [
        {"agent_type": "worker"},
        {"agent_transcript_path": "EXISTING"},
        {"background_tasks": [{"id": "a9f1", "type": "subagent", "status": "running"}]},
    ],
    ids=["typed", "transcript-exists", "id-in-view"],
)
def test_a_firing_missing_one_helper_mark_refuses_on_red(tmp_path: Path, children, overrides) -> None:
    producer = children.sleeper()
    record(tmp_path, "producer", f"pid={producer.pid} run=producer\n")
    if overrides.get("agent_transcript_path") == "EXISTING":
        (tmp_path / "agent.jsonl").write_text("{}\n")
        overrides = {"agent_transcript_path": str(tmp_path / "agent.jsonl")}
    result, line = fire(tmp_path, helper_payload(tmp_path, **overrides))
    assert result.returncode == 2, line
    assert_log_line(line, fields("red", "refuse", records=1, runs="producer", live="yes", keys=HELPER_KEYS))
