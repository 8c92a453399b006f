"""The Claude wrapper's resume path (issue 24) as real processes, fast: a stand-in `claude` logs
its argv and publishes its session id (a UUID, as Claude's are) through the real `st2 driver
claude-observe` SessionStart hook (fenced to the token the wrapper exported); it exits 1 when asked
to resume the id DEAD, as Claude 2.1.197 does for a transcript its store no longer holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from st2.bus.guide import guide_text
from support import make_seat, record, without_guide

from st2.runtime import resumable_session

pytestmark = pytest.mark.process

HOOK_PAYLOAD = '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup"}'
FRESH = "00000000-0000-4000-8000-"  # a fresh session's id: this prefix and the stand-in's PID (a UUID)
DEAD = "deadbeef-0000-4000-8000-000000000000"  # the id the stand-in refuses to resume


def stand_in(tmp_path: Path, catalog: Path, published: str = '"$id"') -> Path:
    """The stand-in; it publishes ``published`` (a shell word) as its session id."""
    script = tmp_path / "claude"
    script.write_text(
        "#!/bin/sh\n"
        f"echo \"argv:$*\" >> '{tmp_path}/argv'\n"
        f'id=$(printf "%s%012d" {FRESH} $$)\n'
        f'for word; do case "$word" in --resume=*) id="${{word#--resume=}}";; esac; done\n'
        f'[ "$id" = "{DEAD}" ] && exit 1\n'
        f"printf '{HOOK_PAYLOAD}' {published} | st2 driver claude-observe --catalog '{catalog}' --identity host.worker "
        "--event SessionStart\n")
    script.chmod(0o755)
    return script


def run_wrapper(catalog: Path, script: Path, state: Path) -> int:
    return run_wrapper_said(catalog, script, state)[0]


def run_wrapper_said(catalog: Path, script: Path, state: Path) -> tuple[int, str]:
    """The wrapper's exit status and what it said on its terminal (stderr)."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST2_CLAUDE_", "ST_AGENT"))}
    env["XDG_STATE_HOME"] = str(state)
    process = subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "claude-session", "--identity",
         "host.worker", "--runtime-id", "host.worker", "--", str(script)],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _, said = process.communicate(timeout=60)
        return process.returncode, said.decode(errors="replace")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def session(catalog: Path, state: Path) -> dict:
    store = resumable_session.SessionStore.of(catalog, "host", state / "st2")
    return json.loads(store.record("host.worker").read_text())


def argv_lines(tmp_path: Path) -> list[str]:
    return without_guide((tmp_path / "argv").read_text()).splitlines()


def declare(seat, body: str = "") -> None:
    (seat.directory / "agent.kdl").write_text(f'agent "worker" {{\n    claude {{ }}\n{body}}}\n')


def test_the_next_launch_resumes_the_id_the_hook_published(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    assert run_wrapper(catalog, script, state) == 0
    first = session(catalog, state)
    assert (first["start"], first["sessionId"].startswith(FRESH)) == ("fresh", True)
    assert first["incarnation"] == record(seat, "harness-state")["incarnation"]
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path) == ["argv:", f"argv:--resume={first['sessionId']}"]
    # Both launches carried the bus guide in Claude's system-prompt slot.
    guide = f"--append-system-prompt {guide_text()}"
    assert (tmp_path / "argv").read_text() == f"argv:{guide}\nargv:{guide} --resume={first['sessionId']}\n"
    second = session(catalog, state)
    assert (second["start"], second["sessionId"], second["resumedFrom"]) == ("resumed",) + (first["sessionId"],) * 2


def test_resume_never_passes_no_resume(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat, '    resume "never"\n')
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    assert run_wrapper(catalog, script, state) == 0
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path) == ["argv:", "argv:"]
    assert session(catalog, state)["start"] == "fresh"


def test_a_refused_resume_spawns_fresh_exactly_once_and_is_never_retried(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    store = resumable_session.SessionStore.of(catalog, "host", state / "st2")
    store.ensure()
    store.record("host.worker").write_bytes(resumable_session.SessionRecord(
        runtime_id="host.worker", agent="host.worker", harness="claude", incarnation="before",
        start="fresh", session_id=DEAD).to_json())
    assert run_wrapper(catalog, script, state) == 0
    lines = argv_lines(tmp_path)
    assert lines == [f"argv:--resume={DEAD}", "argv:"]  # refused, then one fresh spawn, same incarnation
    fallback = session(catalog, state)
    assert (fallback["start"], fallback["resumedFrom"], [lost["sessionId"] for lost in fallback["lost"]]) == (
        "fallback", DEAD, [DEAD])
    assert fallback["sessionId"].startswith(FRESH)
    assert (record(seat, "driver-diagnostic")["stage"], record(seat, "harness-state")["exit"]) == ("resume", "exit 0")
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path)[2:] == [f"argv:--resume={fallback['sessionId']}"]  # never DEAD again
    assert record(seat, "driver-diagnostic") is None  # superseded by a start that is not a fallback


def write_record(catalog: Path, state: Path, session_id: str, agent: str = "host.worker") -> None:
    """A record as anything that can write the session store could leave it."""
    store = resumable_session.SessionStore.of(catalog, "host", state / "st2")
    store.ensure()
    store.record("host.worker").write_bytes(resumable_session.SessionRecord(
        runtime_id="host.worker", agent=agent, harness="claude", incarnation="before", start="fresh",
        session_id=session_id).to_json())


@pytest.mark.parametrize("hostile", ["--dangerously-skip-permissions", "-p", "--resume=x", "x y", "../../etc/passwd",
                                     "esc\x1b]0;pwned\x07", "DEADBEEF-0000-4000-8000-000000000000", DEAD + "x"])
def test_a_recorded_id_that_is_not_a_claude_session_id_is_never_passed_to_claude(catalog, tmp_path, hostile) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    write_record(catalog, state, hostile)
    status, said = run_wrapper_said(catalog, script, state)
    assert status == 0, said
    assert argv_lines(tmp_path) == ["argv:"]  # a fresh session: nothing of the recorded id reached claude
    # A non-printable id makes the record unreadable (absent); a printable one is named, escaped.
    assert ("is not a claude session id; starting a fresh session" in said) is hostile.isprintable(), said
    assert "\x1b" not in said and "\x07" not in said, said
    fresh = session(catalog, state)
    assert (fresh["start"], fresh["sessionId"].startswith(FRESH), fresh["lost"]) == ("fresh", True, [])


def test_an_observer_publishing_an_option_as_the_session_id_records_nothing(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog, published="--dangerously-skip-permissions"), tmp_path / "state"
    assert run_wrapper(catalog, script, state) == 0
    assert session(catalog, state)["sessionId"] is None  # the hook ran; the id was refused at write
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path) == ["argv:", "argv:"]


def test_a_record_naming_another_seat_reads_absent_and_is_never_resumed(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    write_record(catalog, state, DEAD.replace("dead", "0123"), agent="host.other")
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path) == ["argv:"]
    fresh = session(catalog, state)
    assert (fresh["agent"], fresh["start"], fresh["resumedFrom"]) == ("host.worker", "fresh", None)
