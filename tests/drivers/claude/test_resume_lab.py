"""Lab tier, issue 24: the real Claude Code TUI (the pinned 2.1.197) run by `st2 up` survives a
simulated reboot with its conversation. Two `claude { … }` seats share ONE workspace (so "the most
recent session in this directory" would be the wrong answer for one of them); each converses; every
tmux server and pane process group the test started is SIGKILLed and the runtime scope removed;
`st2 up` runs again and the next request the fake model receives from each seat carries that
seat's own earlier conversation — `claude --resume=<the id its hooks published>`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support_claude import REPO

LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_claude  # noqa: E402
from lab_support import require_harness  # noqa: E402
from resume_fleet import (Fleets, ResumeFleet, declare, never_starts_fresh, refused_falls_back_once,  # noqa: E402
                          request_with, transitions, two_seats_resume_their_own)
from st2_seat import fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
WAIT = 120.0


def drawn(seat) -> bool:
    """Claude takes input: SessionStart fired and the TUI drew its status line under this
    incarnation (the tee's first reading; the relaunch claim removed the predecessor's). Typed
    before that, an Enter can be lost while the TUI is still starting."""
    state, context = seat.record("harness-state"), seat.record("harness-context")
    return (transitions(seat) >= 1 and context is not None and state is not None
            and context["incarnation"] == state["incarnation"])


def fleet_of(tmp_path: Path, fake: FakeModel, policies: dict[str, str], extra: str = "") -> ResumeFleet:
    harness = require_harness("claude-code")
    lab = Lab.create(tmp_path / "lab")
    env = configure_claude(lab, harness, fake, hooks=False)
    (lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
    state_home = Path(tempfile.mkdtemp(prefix="st2rs-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    block = (f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n'
             '    }\n')
    seats = declare(tmp_path / "catalog", state_home, env, HOST, lab.workspace, policies, block, extra)
    fleet = ResumeFleet(seats, state_home, drawn)
    fleet.lab = lab
    return fleet


@pytest.fixture
def make_fleet(tmp_path: Path, fake_model: FakeModel):
    fleets = Fleets(lambda policies: fleet_of(tmp_path, fake_model, policies))
    yield fleets
    fleets.close()


def test_two_claude_seats_each_resume_their_own_conversation_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    fleet = make_fleet(alpha="", beta="")
    two_seats_resume_their_own(fleet, fake_model, "claude", lambda session_id, word: any(
        word in path.read_text() for path in (fleet.lab.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")))


def test_a_claude_seat_declaring_resume_never_starts_fresh_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    never_starts_fresh(make_fleet(gamma="never"), fake_model)


def claude_transcript(fleet: ResumeFleet, session_id: str) -> Path:
    # Claude writes the session's transcript after the turn that named the session; under load the
    # caller can get here first, so the file is waited for (one, never several).
    projects = fleet.lab.home / ".claude" / "projects"
    (path,) = poll(lambda: list(projects.glob(f"*/{session_id}.jsonl")), f"the transcript of {session_id}", 60)
    return path


def test_a_refused_claude_resume_falls_back_once_loudly_and_never_retries_the_dead_id(make_fleet, fake_model) -> None:
    fleet = make_fleet(delta="")
    # Claude's store is its projects directory: the transcript gone, --resume=<id> ends at once.
    refused_falls_back_once(fleet, fake_model, "claude", lambda session_id: claude_transcript(fleet, session_id).unlink())


def test_st2_down_then_up_starts_fresh_and_up_resume_resumes(make_fleet, fake_model) -> None:
    fleet = make_fleet(epsilon="")
    epsilon = fleet.seats["epsilon"]
    fleet.up()
    fleet.converse(epsilon, "remember the word BADGER-EPSILON")
    first = poll(lambda: (epsilon.session_record() or {}).get("sessionId"), "epsilon: the published session id", 30)
    assert epsilon.st2("down", "--host", HOST, "epsilon").returncode == 0
    fleet.up()
    second = poll(lambda: (epsilon.session_record() or {}).get("sessionId") not in (None, first)
                  and epsilon.session_record(), "epsilon: a fresh session after st2 down", WAIT, epsilon.screen)
    assert (second["start"], second["resumedFrom"]) == ("fresh", None)
    fleet.converse(epsilon, "remember the word MARTEN-EPSILON")
    assert epsilon.st2("down", "--host", HOST, "epsilon").returncode == 0
    resumed = epsilon.st2("up", "--resume", "--once", "--host", HOST)
    assert resumed.returncode == 0, resumed.stderr
    fleet.up()
    record = poll(lambda: (epsilon.session_record() or {}).get("start") == "resumed" and epsilon.session_record(),
                  "epsilon: resumed after st2 up --resume", WAIT, epsilon.screen)
    assert record["sessionId"] == second["sessionId"]
    fleet.converse(epsilon, "which word, EPSILON-AGAIN")
    request = request_with(fake_model, "EPSILON-AGAIN")
    assert "MARTEN-EPSILON" in request and "BADGER-EPSILON" not in request


def supervise(seat) -> subprocess.Popen:
    """A long-running `st2 up` (its own session, as systemd would start it)."""
    return subprocess.Popen([sys.executable, "-m", "st2", "--catalog", str(seat.catalog), "up", "--host", HOST],
                            env=seat.env, cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def transcript_holds(fleet: ResumeFleet, session_id: str, text: str) -> bool:
    paths = list((fleet.lab.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    return len(paths) == 1 and text in paths[0].read_text(errors="replace")


def test_a_whole_live_fleet_killed_comes_back_resumed(tmp_path: Path, fake_model) -> None:
    """Every st2 process the test started — the long-running supervisor, the seat's DING notifier,
    its wrapper — and its tmux server are SIGKILLed at once, the runtime scope removed; a new
    long-running `st2 up` brings the seat back into its own conversation."""
    fleet = fleet_of(tmp_path, fake_model, {"zeta": ""}, extra="    ding\n")
    zeta = fleet.seats["zeta"]
    supervisors = [supervise(zeta)]
    try:
        zeta.find()
        poll(lambda: fleet.ready(zeta), "zeta: ready", WAIT, zeta.screen, step=0.25)
        fleet.converse(zeta, "remember the word LYNX-ZETA")
        first = fleet.wait_session(zeta, "the published session id", lambda record: record["sessionId"])["sessionId"]
        # Claude writes its transcript behind the turn: the crash must come after the conversation
        # is in its store, or the resume is refused for want of it (seen once under load).
        poll(lambda: transcript_holds(fleet, first, "LYNX-ZETA"), "zeta: the conversation in Claude's transcript",
             WAIT, zeta.screen)
        from st2.runtime import launch_record
        from st2.runtime.scope import RuntimeScope

        scope = RuntimeScope(zeta.catalog, HOST, zeta.state_home / "st2")
        notifier = launch_record.read(scope, f"{HOST}.zeta.ding")
        assert notifier is not None and notifier.kind == "exec"
        os.kill(supervisors[0].pid, signal.SIGKILL)
        os.killpg(notifier.pid, signal.SIGKILL)  # an exec task leads its own process group
        fleet.crash_and_reboot()
        supervisors[0].wait(timeout=30)
        assert not scope.directory.exists()

        supervisors.append(supervise(zeta))
        zeta.find()
        record = fleet.wait_session(zeta, "resumed", lambda record: record["start"] == "resumed")
        assert (record["sessionId"], record["resumedFrom"]) == (first, first)
        poll(lambda: fleet.ready(zeta), "zeta: ready again", WAIT, zeta.screen, step=0.25)
        fleet.converse(zeta, "which word, ZETA-AGAIN")
        assert "LYNX-ZETA" in request_with(fake_model, "ZETA-AGAIN")
    finally:
        zeta.st2("down", "--host", HOST)  # stops the running supervisor, then every task
        for supervisor in supervisors:
            if supervisor.poll() is None:
                os.killpg(supervisor.pid, signal.SIGKILL)
                supervisor.wait()
        fleet.close()
