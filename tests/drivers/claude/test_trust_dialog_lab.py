"""Lab tier, issue 36 item 4: the real Claude Code TUI (the pinned 2.1.197) run by `st2 up`,
resumed into a config dir (``CLAUDE_CONFIG_DIR``) whose ``.claude.json`` holds no trust for the
workspace, stops at Claude's workspace trust dialog before any hook can fire. The wrapper's startup
pane watch (st2/drivers/claude/startup_watch.py) publishes it: ``st2 agents --json`` reads
``blockedOn: human`` (``ask`` permission, reason ``trustDialog``) within seconds. The test then
answers at the pane as a human would; Claude proceeds, its first hook supersedes the watch's
observation, the seat leaves blocked, the resume completes and the next turn carries the
conversation."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support_claude import REPO

LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_claude  # noqa: E402
from lab_support import require_harness  # noqa: E402
from resume_fleet import ResumeFleet, declare, request_with, transitions  # noqa: E402
from st2_seat import fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
BLOCKED_WITHIN = 8.0   # the watch looks every second; Claude draws the dialog within about one


def drawn(seat) -> bool:
    """SessionStart fired and the TUI drew its status line under this incarnation (as
    test_resume_lab.py waits)."""
    state, context = seat.record("harness-state"), seat.record("harness-context")
    return (transitions(seat) >= 1 and context is not None and state is not None
            and context["incarnation"] == state["incarnation"])


def env_block(location: Path) -> str:
    return f'    env {{ CLAUDE_CONFIG_DIR "{location}" }}\n'


def anchored(pid: int) -> bool:
    """The wrapper is the slim anchor (st2/drivers/session_anchor.py), as test_anchor.py tells."""
    from st2.drivers.session_anchor import ANCHOR_FILE

    words = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return words[1:4] == ["-S", "-I", "-c"] and len(words) > 5 and words[5] == str(ANCHOR_FILE)


def observed(seat) -> dict:
    return seat.row()["observedState"] or {}


def test_a_claude_seat_resumed_into_an_untrusted_config_dir_reads_blocked_on_a_human_until_answered(
        tmp_path: Path, fake_model: FakeModel) -> None:
    began = time.monotonic()
    harness = require_harness("claude-code")
    lab = Lab.create(tmp_path / "lab")
    env = configure_claude(lab, harness, fake_model, hooks=False)
    (lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
    trusted, untrusted = tmp_path / "trusted", tmp_path / "untrusted"
    trusted.mkdir()
    untrusted.mkdir()
    (trusted / ".claude.json").write_text((lab.home / ".claude.json").read_text())
    state = json.loads((lab.home / ".claude.json").read_text())
    state["projects"] = {}   # onboarding done, the key approved, no workspace trusted
    (untrusted / ".claude.json").write_text(json.dumps(state))
    state_home = Path(tempfile.mkdtemp(prefix="st2td-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    block = (f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n'
             '    }\n')
    seats = declare(tmp_path / "catalog", state_home, env, HOST, lab.workspace, {"mover": ""}, block,
                    env_block(trusted))
    fleet = ResumeFleet(seats, state_home, drawn)
    seat = seats["mover"]
    try:
        fleet.up()
        fleet.converse(seat, "remember the word MARGAY-T")
        first = fleet.wait_session(seat, "the published session", lambda record: record["sessionId"])["sessionId"]
        assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
        poll(lambda: list((trusted / "projects").glob(f"*/{first}.jsonl")), "the transcript", 30)
        shutil.copytree(trusted / "projects", untrusted / "projects")   # the conversation, not the trust
        declaration = seat.directory / "agent.kdl"
        declaration.write_text(declaration.read_text().replace(env_block(trusted), env_block(untrusted)))
        started = seat.st2("up", "--resume", "--once", "--host", HOST)
        assert started.returncode == 0, started.stdout + started.stderr
        relaunched = time.monotonic()
        seat.find()

        blocked = poll(lambda: (lambda state: state if state.get("blockedOn") == "human" else None)(observed(seat)),
                       "the trust dialog read as blocked on a human", BLOCKED_WITHIN, seat.screen, step=0.25)
        blocked_after = time.monotonic() - relaunched
        assert (blocked["state"], blocked["ask"], blocked["reason"]) == ("active", "permission", "trustDialog")
        assert "Yes, I trust this folder" in seat.screen()
        assert seat.session_record()["start"] == "resuming"   # nothing was answered for the human
        assert not anchored(seat.wrapper())   # the watch runs in the resident wrapper, before the anchor
        record = seat.record("harness-state")
        time.sleep(1.5)   # the watch does not restate its observation while the dialog stands
        assert seat.record("harness-state") == record

        seat.tmux("send-keys", "-t", seat.session, "1")   # the human trusts the folder
        poll(lambda: "Yes, I trust this folder" not in seat.screen(), "the dialog answered", 10, seat.screen)
        poll(lambda: (lambda state: state.get("blockedOn") == "none" and state.get("state") == "idle")(observed(seat)),
             "the seat left blocked", 30, seat.screen, step=0.25)
        assert (seat.record("harness-state") or {}).get("reason") == "sessionStart"
        poll(lambda: anchored(seat.wrapper()), "the wrapper anchored once the watch ended", 10, seat.screen)
        resumed = fleet.wait_session(seat, "the resume completed", lambda record: record["start"] != "resuming")
        assert (resumed["start"], resumed["sessionId"]) == ("resumed", first)
        poll(lambda: drawn(seat), "the TUI drawn", 30, seat.screen, step=0.25)
        fleet.converse(seat, "which word, WORD-U")
        assert "MARGAY-T" in request_with(fake_model, "WORD-U")
        print(json.dumps({"blocked after relaunch": round(blocked_after, 1),
                          "total": round(time.monotonic() - began, 1)}))
    finally:
        seat.st2("down", "--host", HOST)
        fleet.close()
