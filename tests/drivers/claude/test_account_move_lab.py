"""Lab tier, accounts: the real Claude Code TUI (the pinned 2.1.197) run by `st2 up` moves to another
account — another ``CLAUDE_CONFIG_DIR`` — and back into its conversation only through st2's copy
(st2.accounts.carry, ``CARRY["claude"] == "copy"``). A seat converses under config location A; `st2
down`; its ``env`` names location B (prepared as the lab prepares any: onboarding, the dummy key
approved, the workspace trusted); `st2 up --resume`: Claude, asked ``--resume=<id>``, finds no
transcript in B and the seat falls back, loudly, to a fresh session — the model never sees the old
conversation. The seat converses again in B, moves to C, and this time :func:`carry` copies the
session's transcript (``projects/<encoded cwd>/<id>.jsonl``, nothing else) from B to C first: the
seat resumes that same session, and the next request carries the earlier conversation.

The product path end to end (docs/accounts.md §Moving a seat between accounts): accounts declared in
``catalog.kdl``, the seat moved by `st2 agent account` while a turn is in flight, `st2 up` waiting
for the idle boundary, then relaunching it on the other account through :func:`carry`."""

from __future__ import annotations

import json
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
from resume_fleet import ResumeFleet, declare, idle_after, request_with, transitions  # noqa: E402
from st2_seat import fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

from st2.accounts.carry import CARRY, CONFIG_ENV, carry  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
WAIT = 120.0


def drawn(seat) -> bool:
    """SessionStart fired and the TUI drew its status line under this incarnation (as
    test_resume_lab.py waits)."""
    state, context = seat.record("harness-state"), seat.record("harness-context")
    return (transitions(seat) >= 1 and context is not None and state is not None
            and context["incarnation"] == state["incarnation"])


def env_block(location: Path) -> str:
    return f'    env {{ {CONFIG_ENV["claude"]} "{location}" }}\n'


def prepare(lab: Lab, location: Path) -> Path:
    """A fresh config location holding what the lab writes for any Claude (its ``.claude.json``)."""
    location.mkdir(parents=True)
    (location / ".claude.json").write_text((lab.home / ".claude.json").read_text())
    return location


def transcript(location: Path, session_id: str) -> Path | None:
    found = list((location / "projects").glob(f"*/{session_id}.jsonl"))
    return found[0] if len(found) == 1 else None


def holds(location: Path, session_id: str, word: str) -> bool:
    path = transcript(location, session_id)
    return path is not None and word in path.read_text(errors="replace")


def move(fleet: ResumeFleet, seat, old: Path, new: Path) -> dict:
    """`st2 down` the seat, point its ``env`` at ``new``, `st2 up --resume` (then adopt it); return
    the new incarnation's resumable-session record once its start is decided."""
    before = seat.session_record()["incarnation"]
    assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
    declaration = seat.directory / "agent.kdl"
    text = declaration.read_text()
    assert env_block(old) in text
    declaration.write_text(text.replace(env_block(old), env_block(new)))
    started = seat.st2("up", "--resume", "--once", "--host", HOST)
    assert started.returncode == 0, started.stdout + started.stderr
    seat.find()
    fleet.up()
    return fleet.wait_session(seat, "the relaunch's start", lambda record: record["incarnation"] != before
                              and record["start"] != "resuming")


def test_a_claude_seat_moved_to_another_config_dir_keeps_its_conversation_only_through_carry(
        tmp_path: Path, fake_model: FakeModel) -> None:
    assert CARRY["claude"] == "copy"
    began = time.monotonic()
    harness = require_harness("claude-code")
    lab = Lab.create(tmp_path / "lab")
    env = configure_claude(lab, harness, fake_model, hooks=False)
    (lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
    a, b, c = (prepare(lab, tmp_path / "accounts" / name) for name in ("a", "b", "c"))
    state_home = Path(tempfile.mkdtemp(prefix="st2am-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    block = (f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n'
             '    }\n')
    seats = declare(tmp_path / "catalog", state_home, env, HOST, lab.workspace, {"mover": ""}, block, env_block(a))
    fleet = ResumeFleet(seats, state_home, drawn)
    seat = seats["mover"]
    timings = {}
    try:
        fleet.up()
        fleet.converse(seat, "remember the word OCELOT-A")
        first = fleet.wait_session(seat, "the published session", lambda record: record["sessionId"])["sessionId"]
        poll(lambda: holds(a, first, "OCELOT-A"), "the conversation in A's transcript", WAIT, seat.screen)
        assert not (lab.home / ".claude" / "projects").exists()  # the env block, not HOME, named the store
        timings["converse under A"] = time.monotonic() - began

        # (a) Relaunched under B without a copy: B has no transcript; the resume is refused, once.
        record = move(fleet, seat, a, b)
        assert (record["start"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
            "fallback", first, [first])
        fleet.converse(seat, "which word, WORD-B, and remember CARACAL-B")
        assert "OCELOT-A" not in request_with(fake_model, "WORD-B")
        second = fleet.wait_session(seat, "B's own session",
                                    lambda record: record["sessionId"] not in (None, first))["sessionId"]
        poll(lambda: holds(b, second, "CARACAL-B"), "the conversation in B's transcript", WAIT, seat.screen)
        assert transcript(a, second) is None and transcript(b, first) is None
        timings["move A->B, no copy"] = time.monotonic() - began - sum(timings.values())

        # (b) Relaunched under C after carry(): the transcript alone brings the conversation along.
        assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
        old_env, new_env = env | {"CLAUDE_CONFIG_DIR": str(b)}, env | {"CLAUDE_CONFIG_DIR": str(c)}
        assert carry("claude", second, str(lab.workspace), old_env, new_env) is None
        copied = [path.relative_to(c) for path in c.rglob("*") if path.is_file()]
        assert sorted(map(str, copied)) == sorted([".claude.json", str(transcript(b, second).relative_to(b))])
        record = move(fleet, seat, b, c)
        assert (record["start"], record["sessionId"], record["resumedFrom"]) == ("resumed", second, second)
        fleet.converse(seat, "which word, WORD-C")
        request = request_with(fake_model, "WORD-C")
        assert "CARACAL-B" in request and "OCELOT-A" not in request
        timings["move B->C, carry()"] = time.monotonic() - began - sum(timings.values())
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        seat.st2("down", "--host", HOST)
        fleet.close()


# --- the product path: `st2 agent account` moves the running seat at its next idle boundary ---------

ACCOUNTS = '''catalog {{
    account "a" {{ config-dir claude="{a}" }}
    account "b" {{ config-dir claude="{b}" }}
}}
'''
HELD = "HOLD-THIS-TURN"


def launch(seat) -> dict:
    """The seat's launch record (``tasks/<runtime id>.json`` in its runtime scope)."""
    [path] = seat.state_home.glob(f"st2/**/tasks/{HOST}.{seat.identity}.json")
    return json.loads(path.read_text())


def state(seat) -> str | None:
    return (seat.record("harness-state") or {}).get("state")


def test_st2_agent_account_moves_a_claude_seat_at_its_next_idle_boundary_and_carries_its_conversation(
        tmp_path: Path, fake_model: FakeModel) -> None:
    """Accounts "a" and "b" in ``catalog.kdl`` (each its own ``CLAUDE_CONFIG_DIR``), the seat on "a"
    (no ``env`` block: the account names the location). It converses under A; a turn is kept in
    flight (the fake model holds its answer) while the operator runs `st2 agent account <seat> b`:
    `st2 up` passes leave the seat alone and say it moves at its next idle boundary. The answer
    released and the seat idle, the next pass relaunches it on "b", st2's carry puts the transcript
    under B, the seat resumes the same session and the next request carries the old word."""
    began = time.monotonic()
    harness = require_harness("claude-code")
    lab = Lab.create(tmp_path / "lab")
    env = configure_claude(lab, harness, fake_model, hooks=False)
    assert CONFIG_ENV["claude"] not in env
    (lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
    a, b = (prepare(lab, tmp_path / "accounts" / name) for name in ("a", "b"))
    state_home = Path(tempfile.mkdtemp(prefix="st2an-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    block = (f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n'
             '    }\n')
    catalog = tmp_path / "catalog"
    seats = declare(catalog, state_home, env, HOST, lab.workspace, {"mover": ""}, block, '    account "a"\n')
    (catalog / "catalog.kdl").write_text(ACCOUNTS.format(a=a, b=b))
    fleet = ResumeFleet(seats, state_home, drawn)
    seat = seats["mover"]
    timings = {}
    try:
        fleet.up()
        assert launch(seat)["account"] == "a"
        fleet.converse(seat, "remember the word OCELOT-A")
        first = fleet.wait_session(seat, "the published session", lambda record: record["sessionId"])["sessionId"]
        poll(lambda: holds(a, first, "OCELOT-A"), "the conversation in A's transcript", WAIT, seat.screen)
        assert transcript(b, first) is None and not (lab.home / ".claude" / "projects").exists()
        timings["converse under A"] = time.monotonic() - began

        # A turn in flight: the model's answer is held. The operator moves the seat meanwhile.
        fake_model.hold(HELD)
        before, running = transitions(seat), launch(seat)
        seat.type(f"and now {HELD}")
        poll(lambda: any(entry.get("held") for entry in fake_model.model_requests()), "the held request", WAIT,
             seat.screen)
        poll(lambda: state(seat) not in (None, "ready", "idle"), "the turn under way", WAIT, seat.screen)
        moved = seat.st2("agent", "account", "--host", HOST, seat.identity, "b")
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert 'account "b"' in (seat.directory / "agent.kdl").read_text()
        for _ in range(2):
            passed = seat.st2("up", "--once", "--host", HOST)
            assert passed.returncode == 0, passed.stdout + passed.stderr
            assert (launch(seat)["pid"], launch(seat)["account"]) == (running["pid"], "a"), "never mid-turn"
            assert f"st2 up: {HOST}.mover moves from account a to b at its next idle boundary" in passed.stderr, (
                passed.stdout + passed.stderr)
            assert state(seat) not in ("ready", "idle")
        timings["mid-turn passes"] = time.monotonic() - began - sum(timings.values())

        # Released: the turn ends, the seat reads idle, and the next pass moves it.
        fake_model.release(HELD)
        poll(lambda: idle_after(seat, before + 1), "the held turn's end", WAIT, seat.screen)
        incarnation = seat.session_record()["incarnation"]
        passed = seat.st2("up", "--once", "--host", HOST)  # its exit status is asserted after the word
        assert f"st2 up: moving {HOST}.mover[{running['pid']}] from account a to b" in passed.stderr, (
            passed.stdout + passed.stderr)
        seat.find()
        assert launch(seat)["account"] == "b" and launch(seat)["pid"] != running["pid"]
        fleet.up()  # later passes adopt the moved seat; wait until its TUI is drawn
        assert launch(seat)["account"] == "b"
        record = fleet.wait_session(seat, "the relaunch's start", lambda record: record["incarnation"] != incarnation
                                    and record["start"] != "resuming")
        fleet.converse(seat, "which word, WORD-B")
        request = request_with(fake_model, "WORD-B")
        assert "OCELOT-A" in request and HELD in request, "st2's carry brought the conversation to B"
        assert passed.returncode == 0, passed.stdout + passed.stderr  # a lost session is an error line
        assert (record["start"], record["sessionId"], record["resumedFrom"], record["lost"]) == (
            "resumed", first, first, [])
        assert holds(b, first, "OCELOT-A")
        timings["move to b at idle"] = time.monotonic() - began - sum(timings.values())
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        fake_model.release()
        seat.st2("down", "--host", HOST)
        fleet.close()
