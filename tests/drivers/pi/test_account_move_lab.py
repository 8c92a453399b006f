"""Lab tier, accounts: the real pi (0.73.1) and omp (18.2.3) TUIs run by `st2 up` moved to another
account — another ``PI_CODING_AGENT_DIR``, the agent directory both read (models, credentials,
sessions) — do NOT keep their conversations (st2.accounts.carry, ``CARRY["pi"]`` and
``CARRY["omp"]`` are None). A seat converses under agent directory A; `st2 down`; its ``env`` names
B (the lab's models file, nothing else); `st2 up --resume`; the next request does not carry the
old conversation. pi: the recorded id is the session FILE, an absolute path under A, which the
wrapper's guard (:func:`st2.drivers.session_ids.is_session_file_in`) refuses under B — so the seat
starts fresh (one line on the terminal, nothing counted lost), and copying the file to the same
place under the next location first changes nothing (the record still names the old path; a copy
would need the record's id rewritten, which :func:`carry` cannot do). omp 18.2.3 keeps its
sessions under ``$PI_CODING_AGENT_DIR/sessions``, where st2's guard looks too
(:func:`st2.drivers.session_ids.omp_sessions_directories`), so its session under A is recorded
and refused under B alike. If either starts carrying, this test fails and the row is to be
measured again."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support_channel import REPO

for directory in (REPO / "tests" / "lab", REPO / "tests" / "ding"):  # capture_omp_screens: tests/ding
    if str(directory) not in sys.path:
        sys.path.append(str(directory))

from fake_model import FakeModel  # noqa: E402
from harnesses import environment_path  # noqa: E402
from lab_config import Lab, configure_pi  # noqa: E402
from lab_support import require_harness  # noqa: E402
from resume_fleet import ResumeFleet, declare, request_with  # noqa: E402
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

from st2.accounts.carry import CARRY, CONFIG_ENV, carry  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
WAIT = 120.0


def env_block(name: str, location: Path) -> str:
    return f'    env {{ {CONFIG_ENV[name]} "{location}" }}\n'


def move(fleet: ResumeFleet, seat: UpSeat, name: str, old: Path, new: Path) -> dict:
    """`st2 down` the seat, point its ``env`` at ``new``, `st2 up --resume` (then adopt it); return
    the new incarnation's resumable-session record once its start is decided."""
    before = seat.session_record()["incarnation"]
    assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
    declaration = seat.directory / "agent.kdl"
    text = declaration.read_text()
    assert env_block(name, old) in text
    declaration.write_text(text.replace(env_block(name, old), env_block(name, new)))
    started = seat.st2("up", "--resume", "--once", "--host", HOST)
    assert started.returncode == 0, started.stdout + started.stderr
    seat.find()
    fleet.up()
    return fleet.wait_session(seat, "the relaunch's start", lambda record: record["incarnation"] != before
                              and record["start"] != "resuming")


def sessions(location: Path) -> list[Path]:
    return sorted((location / "sessions").glob("*/*.jsonl"))


@pytest.mark.parametrize("name", ["pi", "omp"])
def test_a_pi_family_seat_moved_to_another_agent_dir_starts_fresh(name: str, tmp_path: Path,
                                                                   fake_model: FakeModel) -> None:
    assert CARRY[name] is None
    began = time.monotonic()
    harness = require_harness(name)
    lab = Lab.create(tmp_path / "lab")
    env = configure_pi(lab, harness, fake_model)
    arguments = '        args "--offline"\n' if name == "pi" else ""
    agent = lab.home / (".omp" if name == "omp" else ".pi") / "agent"
    if name == "omp":
        from capture_omp_screens import OMP_OFFLINE_SETTINGS

        config = agent / "config.yml"
        config.write_text(config.read_text() + OMP_OFFLINE_SETTINGS)
        env["OMP_SKIP_SETUP"] = "1"
    a, b = tmp_path / "accounts" / "a", tmp_path / "accounts" / "b"
    for location in (a, b):  # each a fresh agent directory holding only the lab's models (and omp's config)
        shutil.copytree(agent, location)
    state_home = Path(tempfile.mkdtemp(prefix="st2ap-"))  # short: tmux sockets live under it
    env = env | {"XDG_STATE_HOME": str(state_home),
                 "PATH": f"{Path(sys.executable).parent}:{environment_path(harness)}"}
    block = (f'    {name} {{\n        executable "{harness.executable}"\n        provider "fake-anthropic"\n'
             f'        model "fake-claude"\n{arguments}    }}\n')
    seats = declare(tmp_path / "catalog", state_home, env, HOST, lab.workspace, {"mover": ""}, block,
                    env_block(name, a))

    def ready(seat: UpSeat) -> bool:
        state = seat.record("harness-state") or {}
        return state.get("state") == "idle" and "fake-claude" in seat.screen()

    fleet = ResumeFleet(seats, state_home, ready)
    seat = seats["mover"]
    timings = {}
    try:
        fleet.up()
        fleet.converse(seat, "remember the word OCELOT-A")
        poll(lambda: any("OCELOT-A" in path.read_text() for path in sessions(a)), "the conversation in A", WAIT,
             seat.screen)
        assert not sessions(agent)  # the env block, not HOME, named the store
        # Both record the session file under A (omp's guard reads PI_CODING_AGENT_DIR as omp does).
        record = fleet.wait_session(seat, "the published session", lambda record: record["sessionId"])
        assert Path(record["sessionId"]) in sessions(a)
        first = seat.session_record()["sessionId"]
        timings["converse under A"] = time.monotonic() - began

        # (a) Relaunched under B: a fresh session; the model never sees A's conversation.
        record = move(fleet, seat, name, a, b)
        assert (record["start"], record["resumedFrom"], record["lost"]) == ("fresh", None, [])
        if name == "pi":  # the guard discarded A's path, said so on the terminal, and lost nothing
            assert "is not a pi session id; starting a fresh session" in seat.screen()
        fleet.converse(seat, "which word, WORD-B, and remember CARACAL-B")
        assert "OCELOT-A" not in request_with(fake_model, "WORD-B")
        assert carry(name, first or "", str(lab.workspace), env | {CONFIG_ENV[name]: str(a)},
                     env | {CONFIG_ENV[name]: str(b)}) == (
            f"{name}: carrying a conversation to another config location was not proved in the lab; "
            "the seat starts a fresh session")
        timings["move A->B"] = time.monotonic() - began - sum(timings.values())

        if name == "pi":
            # (b) pi: the session file copied from B into C first (what a "copy" row would do) still
            # starts fresh: the record names B's path, which the guard refuses under C.
            second = fleet.wait_session(seat, "B's session", lambda record: record["sessionId"])["sessionId"]
            assert Path(second) in sessions(b)
            poll(lambda: "CARACAL-B" in Path(second).read_text(), "the conversation in B", WAIT, seat.screen)
            assert seat.st2("down", "--host", HOST, seat.identity).returncode == 0
            c = tmp_path / "accounts" / "c"
            shutil.copytree(agent, c)
            target = c / "sessions" / Path(second).parent.name / Path(second).name
            target.parent.mkdir(parents=True)
            shutil.copy2(second, target)
            record = move(fleet, seat, name, b, c)
            assert (record["start"], record["resumedFrom"], record["lost"]) == ("fresh", None, [])
            fleet.converse(seat, "which word, WORD-C")
            assert "CARACAL-B" not in request_with(fake_model, "WORD-C")
            timings["move B->C, file copied"] = time.monotonic() - began - sum(timings.values())
        print(json.dumps({name: round(seconds, 1) for name, seconds in timings.items()}))
    finally:
        seat.st2("down", "--host", HOST)
        fleet.close()
