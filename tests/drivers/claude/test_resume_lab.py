"""Lab tier, issue 24: the real Claude Code TUI (the pinned 2.1.197) run by `st2 up` survives a
simulated reboot with its conversation. Two `claude { … }` seats share ONE workspace (so "the most
recent session in this directory" would be the wrong answer for one of them); each converses; every
tmux server and pane process group the test started is SIGKILLed and the runtime scope removed;
`st2 up` runs again and the next request the fake model receives from each seat carries that
seat's own earlier conversation — `claude --resume <the id its hooks published>`."""

from __future__ import annotations

import json
import shutil
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
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
WAIT = 120.0


class Seat(UpSeat):
    scrollback = 0

    def idle_after(self, transitions: int) -> bool:
        state = self.record("harness-state")
        return bool(state) and state["state"] == "idle" and state["transitions"] > transitions

    def transitions(self) -> int:
        return (self.record("harness-state") or {}).get("transitions", 0)


class Fleet:
    def __init__(self, tmp_path: Path, fake: FakeModel, policies: dict[str, str]) -> None:
        harness = require_harness("claude-code")
        self.lab = Lab.create(tmp_path / "lab")
        env = configure_claude(self.lab, harness, fake, hooks=False)
        (self.lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
        self.state_home = Path(tempfile.mkdtemp(prefix="st2rs-"))  # short: tmux sockets live under it
        catalog = tmp_path / "catalog"
        env = env | {"XDG_STATE_HOME": str(self.state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
        self.seats: dict[str, Seat] = {}
        for identity, policy in policies.items():
            directory = catalog / "agents" / HOST / identity
            directory.mkdir(parents=True)
            knob = f'    resume "{policy}"\n' if policy else ""
            (directory / "agent.kdl").write_text(
                f'agent "{identity}" {{\n    workspace "{self.lab.workspace}"\n{knob}'
                f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n'
                f'    }}\n}}\n')
            self.seats[identity] = Seat(catalog, self.state_home, env, HOST, identity)
        self.any = next(iter(self.seats.values()))

    def up(self) -> None:
        self.any.up(session=False)
        for seat in self.seats.values():
            seat.up()  # a second pass adopts; it finds each seat's socket and session
            poll(lambda: seat.transitions() >= 1, f"{seat.identity}: SessionStart", WAIT, seat.screen, step=0.25)

    def converse(self, seat: Seat, text: str) -> None:
        before = seat.transitions()
        seat.type(text)
        poll(lambda: seat.idle_after(before + 1), f"{seat.identity}: the turn {text!r}", WAIT, seat.screen, step=0.25)

    def crash_and_reboot(self) -> None:
        for seat in self.seats.values():
            seat.crash()
        for seat in self.seats.values():
            seat.reboot()

    def close(self) -> None:
        for seat in self.seats.values():
            seat.kill_pty()
        shutil.rmtree(self.state_home, ignore_errors=True)


@pytest.fixture
def make_fleet(tmp_path: Path, fake_model: FakeModel):
    made: list[Fleet] = []

    def make(**policies: str) -> Fleet:
        made.append(Fleet(tmp_path, fake_model, policies))
        return made[-1]

    yield make
    for fleet in made:
        fleet.close()


def request_texts(fake: FakeModel, marker: str) -> list[str]:
    """The user texts of each logged request that carries ``marker`` (one string per request)."""
    texts = []
    for entry in fake.model_requests():
        body = json.dumps((entry.get("body") or {}).get("messages", []))
        if marker in body:
            texts.append(body)
    return texts


def test_two_claude_seats_each_resume_their_own_conversation_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    fleet = make_fleet(alpha="", beta="")
    alpha, beta = fleet.seats["alpha"], fleet.seats["beta"]
    fleet.up()
    fleet.converse(alpha, "remember the word PELICAN-ALPHA")
    fleet.converse(beta, "remember the word WALRUS-BETA")
    ids = {}
    for seat in (alpha, beta):
        record = poll(lambda: (seat.session_record() or {}).get("sessionId") and seat.session_record(),
                      f"{seat.identity}: the published session id", 30)
        assert (record["start"], record["harness"], record["runtimeId"]) == ("fresh", "claude", f"{HOST}.{seat.identity}")
        ids[seat.identity] = record["sessionId"]
    assert ids["alpha"] != ids["beta"]

    fleet.crash_and_reboot()
    fleet.up()
    for seat in (alpha, beta):
        record = poll(lambda: (seat.session_record() or {}).get("start") == "resumed" and seat.session_record(),
                      f"{seat.identity}: resumed", WAIT, seat.screen)
        assert (record["sessionId"], record["resumedFrom"], record["lost"]) == (ids[seat.identity],) * 2 + ([],)
    fleet.converse(alpha, "which word, ALPHA-AGAIN")
    fleet.converse(beta, "which word, BETA-AGAIN")
    (alpha_request,) = request_texts(fake_model, "ALPHA-AGAIN")[-1:]
    (beta_request,) = request_texts(fake_model, "BETA-AGAIN")[-1:]
    assert "PELICAN-ALPHA" in alpha_request and "WALRUS-BETA" not in alpha_request
    assert "WALRUS-BETA" in beta_request and "PELICAN-ALPHA" not in beta_request


def test_a_claude_seat_declaring_resume_never_starts_fresh_after_a_simulated_reboot(make_fleet, fake_model) -> None:
    fleet = make_fleet(gamma="never")
    gamma = fleet.seats["gamma"]
    fleet.up()
    fleet.converse(gamma, "remember the word HERON-GAMMA")
    first = poll(lambda: (gamma.session_record() or {}).get("sessionId"), "gamma: the published session id", 30)
    fleet.crash_and_reboot()
    fleet.up()
    record = poll(lambda: (gamma.session_record() or {}).get("sessionId") not in (None, first) and gamma.session_record(),
                  "gamma: a new session", WAIT, gamma.screen)
    assert (record["start"], record["resumedFrom"], record["lost"]) == ("fresh", None, [])
    fleet.converse(gamma, "which word, GAMMA-AGAIN")
    (request,) = request_texts(fake_model, "GAMMA-AGAIN")[-1:]
    assert "HERON-GAMMA" not in request


def claude_transcript(fleet: Fleet, session_id: str) -> Path:
    (path,) = (fleet.lab.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl")
    return path


def test_a_refused_claude_resume_falls_back_once_loudly_and_never_retries_the_dead_id(make_fleet, fake_model) -> None:
    fleet = make_fleet(delta="")
    delta = fleet.seats["delta"]
    fleet.up()
    fleet.converse(delta, "remember the word OTTER-DELTA")
    dead = poll(lambda: (delta.session_record() or {}).get("sessionId"), "delta: the published session id", 30)
    claude_transcript(fleet, dead).unlink()  # the harness's store no longer holds it
    fleet.crash_and_reboot()
    fleet.up()
    record = poll(lambda: (delta.session_record() or {}).get("start") not in (None, "resuming")
                  and (delta.session_record() or {}).get("sessionId") and delta.session_record(),
                  "delta: the fallback's session", WAIT, delta.screen)
    fallback = record["sessionId"]
    assert (record["start"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
        "fallback", dead, [dead])
    assert fallback != dead
    # Loud: the driver-diagnostic's own stage, the enriched roster, and Doctor naming the lost id.
    row = json.loads(delta.st2("agents", "--json", "--enrich", "--host", HOST).stdout)[0]
    assert json.dumps(row["session"], separators=(",", ":")) == (
        f'{{"start":"fallback","sessionId":"{fallback}","lostSessionIds":["{dead}"]}}')
    assert (row["driverDiagnostic"]["status"], row["driverDiagnostic"]["driver"], row["driverDiagnostic"]["stage"],
            row["driverDiagnostic"]["reason"], row["driverDiagnostic"]["source"]) == (
        "failure", "claude", "resume", "resumeRefused", "resumeAttempt")
    doctor = delta.st2("doctor", "--host", HOST).stdout
    assert (f"advisory: {HOST}.delta: session-lost: harness session {dead} could not be resumed; the seat started "
            "a fresh session (the lost id is kept in its resumable-session record and never retried)") in doctor
    fleet.converse(delta, "which word, DELTA-AGAIN")
    (request,) = request_texts(fake_model, "DELTA-AGAIN")[-1:]
    assert "OTTER-DELTA" not in request

    # Bounded: the next relaunch resumes the fallback's session, never the dead id.
    fleet.crash_and_reboot()
    fleet.up()
    record = poll(lambda: (delta.session_record() or {}).get("start") == "resumed" and delta.session_record(),
                  "delta: the fallback session resumed", WAIT, delta.screen)
    assert (record["sessionId"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
        fallback, fallback, [dead])
    assert "session-lost" not in delta.st2("doctor", "--host", HOST).stdout
    fleet.converse(delta, "and now, DELTA-THIRD")
    (request,) = request_texts(fake_model, "DELTA-THIRD")[-1:]
    assert "DELTA-AGAIN" in request and "OTTER-DELTA" not in request


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
    (request,) = request_texts(fake_model, "EPSILON-AGAIN")[-1:]
    assert "MARTEN-EPSILON" in request and "BADGER-EPSILON" not in request
