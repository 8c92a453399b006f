"""The Claude wrapper's resume path (issue 24) as real processes, fast: a stand-in `claude` logs
its argv and publishes its session id through the real `st2 driver claude-observe` SessionStart
hook (fenced to the token the wrapper exported); it exits 1 when asked to resume the id "dead",
as Claude 2.1.197 does for a transcript its store no longer holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import make_seat, record

from st2.runtime import resumable_session

pytestmark = pytest.mark.process

HOOK_PAYLOAD = '{"session_id":"%s","hook_event_name":"SessionStart","source":"startup"}'


def stand_in(tmp_path: Path, catalog: Path) -> Path:
    script = tmp_path / "claude"
    script.write_text(
        "#!/bin/sh\n"
        f"echo \"argv:$*\" >> '{tmp_path}/argv'\n"
        'if [ "$1" = "--resume" ]; then id="$2"; else id="fresh-$$"; fi\n'
        '[ "$id" = "dead" ] && exit 1\n'
        f"printf '{HOOK_PAYLOAD}' \"$id\" | st2 driver claude-observe --catalog '{catalog}' --identity host.worker "
        "--event SessionStart\n")
    script.chmod(0o755)
    return script


def run_wrapper(catalog: Path, script: Path, state: Path) -> int:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ST2_CLAUDE_", "ST_AGENT"))}
    env["XDG_STATE_HOME"] = str(state)
    process = subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", "claude-session", "--identity",
         "host.worker", "--runtime-id", "host.worker", "--", str(script)],
        env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        return process.wait(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def session(catalog: Path, state: Path) -> dict:
    store = resumable_session.SessionStore.of(catalog, "host", state / "st2")
    return json.loads(store.record("host.worker").read_text())


def argv_lines(tmp_path: Path) -> list[str]:
    return (tmp_path / "argv").read_text().splitlines()


def declare(seat, body: str = "") -> None:
    (seat.directory / "agent.kdl").write_text(f'agent "worker" {{\n    claude {{ }}\n{body}}}\n')


def test_the_next_launch_resumes_the_id_the_hook_published(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    declare(seat)
    script, state = stand_in(tmp_path, catalog), tmp_path / "state"
    assert run_wrapper(catalog, script, state) == 0
    first = session(catalog, state)
    assert (first["start"], first["sessionId"].startswith("fresh-")) == ("fresh", True)
    assert first["incarnation"] == record(seat, "harness-state")["incarnation"]
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path) == ["argv:", f"argv:--resume {first['sessionId']}"]
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
        start="fresh", session_id="dead").to_json())
    assert run_wrapper(catalog, script, state) == 0
    lines = argv_lines(tmp_path)
    assert lines == ["argv:--resume dead", "argv:"]  # refused, then one fresh spawn, same incarnation
    fallback = session(catalog, state)
    assert (fallback["start"], fallback["resumedFrom"], [lost["sessionId"] for lost in fallback["lost"]]) == (
        "fallback", "dead", ["dead"])
    assert fallback["sessionId"].startswith("fresh-")
    assert (record(seat, "driver-diagnostic")["stage"], record(seat, "harness-state")["exit"]) == ("resume", "exit 0")
    assert run_wrapper(catalog, script, state) == 0
    assert argv_lines(tmp_path)[2:] == [f"argv:--resume {fallback['sessionId']}"]  # never "dead" again
    assert record(seat, "driver-diagnostic") is None  # superseded by a start that is not a fallback
