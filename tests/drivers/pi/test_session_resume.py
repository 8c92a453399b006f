"""The pi and omp wrappers resume only a session file of the harness's own store for the seat's
working directory (st2/drivers/session_ids.py): a recorded or channel-named path elsewhere — any
other existing file, a symlink out of the store — is never handed to the harness, as real
processes around a stand-in harness (HOME and the working directory the test's own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support import without_guide
from support_channel import REPO, make_seat

from st2.drivers import session_ids
from st2.runtime import resumable_session

pytestmark = pytest.mark.process

VERSIONS = {"pi": "", "omp": "omp/18.2.3"}
# The stand-in logs every spawn's argv (one line each) and reports the session file it was asked
# to resume on the channel, as the harness's extension does, so a resume is observed, not refused.
REPORTS_ITS_SESSION = (
    'echo "$*" >> "$(dirname "$0")/spawns"\n'
    'f=""; previous=""\n'
    'for a in "$@"; do case "$a" in --resume=*) f="${a#--resume=}";; esac\n'
    '  [ "$previous" = --session ] && f="$a"; previous="$a"; done\n'
    '[ -n "$f" ] && send "{\\"type\\":\\"session\\",\\"event\\":\\"agent_end\\",\\"sessionFile\\":\\"$f\\"}"\n'
    'exit 0\n')


def stand_in(tmp_path: Path, name: str, body: str, version: str = "") -> Path:
    """A harness answering ``--version`` (omp's launch gate) that runs ``body`` with ``send``."""
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + (f'if [ "$1" = --version ]; then echo "{version}"; exit 0; fi\n' if version else "")
                      + "send() { printf '%s\\n' \"$1\" >&\"$ST2_CHANNEL_FD\"; }\n" + body)
    script.chmod(0o755)
    return script


def finish(process: subprocess.Popen) -> int:
    try:
        return process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def sessions_directory(harness: str, home: Path, workspace: Path) -> Path:
    directory = Path((session_ids.pi_sessions_directory if harness == "pi" else session_ids.omp_sessions_directory)(
        {"HOME": str(home)}, os.path.realpath(workspace)))
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def run_wrapper(catalog: Path, tmp_path: Path, harness: str, script: Path) -> int:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("ST2_", "ST_AGENT")) and key != "PI_CODING_AGENT_DIR"}
    env |= {"ST_HOOKS": str(REPO / "hooks"), "XDG_STATE_HOME": str(tmp_path / "state"), "HOME": str(tmp_path / "home"),
            "PYTHONPATH": str(REPO)}
    return finish(subprocess.Popen(
        [sys.executable, "-m", "st2", "--catalog", str(catalog), "driver", f"{harness}-session", "--identity",
         "host.worker", "--runtime-id", "host.worker", "--", str(script)],
        env=env, cwd=tmp_path / "workspace", start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE))


def store(catalog: Path, tmp_path: Path) -> resumable_session.SessionStore:
    return resumable_session.SessionStore.of(catalog, "host", tmp_path / "state" / "st2")


def write_record(catalog: Path, tmp_path: Path, harness: str, session_file: str) -> None:
    sessions = store(catalog, tmp_path)
    sessions.ensure()
    sessions.record("host.worker").write_bytes(resumable_session.SessionRecord(
        runtime_id="host.worker", agent="host.worker", harness=harness, incarnation="before", start="fresh",
        session_id=session_file).to_json())


def spawns(tmp_path: Path, harness: str) -> list[str]:
    """Each spawn's argv after ``-e <extension>``."""
    extension = f"-e {REPO / 'hooks' / f'{harness}-channel.ts'}"
    recorded = without_guide((tmp_path / "spawns").read_text())
    return [line.removeprefix(extension).strip() for line in recorded.splitlines()]


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize("harness", ["pi", "omp"])
@pytest.mark.parametrize("where", ["etc-passwd", "seat-record", "other-project", "symlink-out"])
def test_a_recorded_file_outside_the_harness_store_is_never_resumed(catalog, layout, harness, where) -> None:
    tmp_path = layout
    seat = make_seat(catalog)
    directory = sessions_directory(harness, tmp_path / "home", tmp_path / "workspace")
    other = sessions_directory(harness, tmp_path / "home", tmp_path)  # another working directory's store
    (other / "theirs.jsonl").write_text("{}\n")
    (seat.directory / "status").write_text("available\n")
    os.symlink(other / "theirs.jsonl", directory / "escape.jsonl")
    named = {"etc-passwd": "/etc/passwd", "seat-record": str(seat.directory / "status"),
             "other-project": str(other / "theirs.jsonl"), "symlink-out": str(directory / "escape.jsonl")}[where]
    write_record(catalog, tmp_path, harness, named)
    script = stand_in(tmp_path, harness, REPORTS_ITS_SESSION, version=VERSIONS[harness])
    assert run_wrapper(catalog, tmp_path, harness, script) == 0
    assert spawns(tmp_path, harness) == [""]  # started fresh: the recorded path never reached the harness
    assert json.loads(store(catalog, tmp_path).record("host.worker").read_text())["start"] == "fresh"


@pytest.mark.parametrize("harness", ["pi", "omp"])
def test_a_recorded_file_inside_the_harness_store_is_resumed(catalog, layout, harness) -> None:
    tmp_path = layout
    make_seat(catalog)
    session_file = sessions_directory(harness, tmp_path / "home", tmp_path / "workspace") / "s.jsonl"
    session_file.write_text("{}\n")
    write_record(catalog, tmp_path, harness, str(session_file))
    script = stand_in(tmp_path, harness, REPORTS_ITS_SESSION, version=VERSIONS[harness])
    assert run_wrapper(catalog, tmp_path, harness, script) == 0
    expected = f"--session {session_file}" if harness == "pi" else f"--resume={session_file}"
    assert spawns(tmp_path, harness) == [expected]
    resumed = json.loads(store(catalog, tmp_path).record("host.worker").read_text())
    assert (resumed["start"], resumed["sessionId"]) == ("resumed", str(session_file))


@pytest.mark.parametrize("harness", ["pi", "omp"])
def test_a_channel_frame_naming_a_file_outside_the_store_is_not_recorded(catalog, layout, harness) -> None:
    tmp_path = layout
    make_seat(catalog)
    own = sessions_directory(harness, tmp_path / "home", tmp_path / "workspace") / "own.jsonl"
    frame = '{"type":"session","event":"agent_end","sessionFile":"%s"}'
    script = stand_in(tmp_path, harness, f"send '{frame % '/etc/passwd'}'\nexit 0\n", version=VERSIONS[harness])
    assert run_wrapper(catalog, tmp_path, harness, script) == 0
    assert json.loads(store(catalog, tmp_path).record("host.worker").read_text())["sessionId"] is None
    own.write_text("{}\n")  # the non-firing twin: the harness's own file is recorded
    script = stand_in(tmp_path, harness, f"send '{frame % own}'\nexit 0\n", version=VERSIONS[harness])
    assert run_wrapper(catalog, tmp_path, harness, script) == 0
    assert json.loads(store(catalog, tmp_path).record("host.worker").read_text())["sessionId"] == str(own)
