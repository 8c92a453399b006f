"""Issue 24's lab scaffolding, shared by the per-harness resume proofs: seats of one catalog run by
the real `st2 up`, conversed with through their real TUIs, crashed (SIGKILL of each seat's tmux
server and pane process group) and "rebooted" (the runtime scopes removed), and the requests the
fake model received, searched for a conversation's words."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Callable

from st2_seat import UpSeat, poll
from support import poll_for

from st2.ding.harness import TUI_ADAPTERS
from st2.ding.notifier import DELIVERY_RETRY_BACKOFF_SECONDS, Settings
from st2.ding.terminal import Terminal
from st2.drivers.screen import ReceiptState, receipt

WAIT = 120.0


def retained(seat: UpSeat, text: str, timeout: float = 2.0) -> bool:
    """DING's proof that a Return was not taken, looked for up to ``timeout`` seconds: two adjacent
    observations within its observation window, each a composer (by the product's screen
    grammars) holding exactly ``text``, idle."""
    terminal = Terminal(seat.socket, seat.session)
    window = Settings().observation_window
    deadline = time.monotonic() + timeout
    previous = None
    while time.monotonic() < deadline:
        started = time.monotonic()
        screen = terminal.capture()
        kept = screen is not None and receipt(screen, text, TUI_ADAPTERS) is ReceiptState.RETAINED_SAFE
        if kept and previous is not None and time.monotonic() - previous <= window:
            return True
        previous = started if kept else None
        time.sleep(0.01)
    return False


def transitions(seat: UpSeat) -> int:
    return (seat.record("harness-state") or {}).get("transitions", 0)


def idle_after(seat: UpSeat, count: int) -> bool:
    state = seat.record("harness-state")
    return bool(state) and state["state"] == "idle" and state["transitions"] > count


class ResumeFleet:
    """``seats`` by identity; ``ready(seat)`` says the relaunched harness takes input."""

    def __init__(self, seats: dict[str, UpSeat], state_home: Path, ready: Callable[[UpSeat], bool]) -> None:
        self.seats = seats
        self.state_home = state_home
        self.ready = ready

    def up(self) -> None:
        first = next(iter(self.seats.values()))
        first.up(session=False)
        for seat in self.seats.values():
            seat.up()  # a second pass adopts; it finds each seat's socket and session
            poll(lambda: self.ready(seat), f"{seat.identity}: ready", WAIT, seat.screen, step=0.25)

    def converse(self, seat: UpSeat, text: str) -> None:
        before = transitions(seat)
        seat.type(text)
        # omp 18.2.3 ignores a Return while its composer's bootstrap submit gate is up: the composer
        # is drawn idle and takes keystrokes before start-up has run the session_start hooks
        # (where st2's extension reports idle, which `ready` waits for) and lifted the gate, and
        # on two loaded cores that window can outlast typing the text. Nothing on the screen or in
        # the extension API shows the gate, so the rule is DING's: one bare retry Return after its
        # backoff, only on a composer proven to retain the text (tests/ding/test_omp_startup_gate_lab.py).
        if not poll_for(lambda: transitions(seat) > before, None, DELIVERY_RETRY_BACKOFF_SECONDS, step=0.25) \
                and retained(seat, text):
            print(f"{seat.identity}: no turn {DELIVERY_RETRY_BACKOFF_SECONDS:g} s after Enter and the composer "
                  "retains the text: one retry Return, as DING")
            seat.tmux("send-keys", "-t", seat.session, "Enter")
        poll(lambda: idle_after(seat, before + 1), f"{seat.identity}: the turn {text!r}", WAIT, seat.screen, step=0.25)

    def crash_and_reboot(self) -> None:
        for seat in self.seats.values():
            seat.crash()
        for seat in self.seats.values():
            seat.reboot()

    def wait_session(self, seat: UpSeat, what: str, predicate: Callable[[dict], bool]) -> dict:
        """The seat's resumable-session record once ``predicate`` holds for it."""
        return poll(lambda: (lambda record: record if record and predicate(record) else None)(seat.session_record()),
                    f"{seat.identity}: {what}", WAIT, seat.screen)

    def close(self) -> None:
        for seat in self.seats.values():
            seat.kill_pty()
        shutil.rmtree(self.state_home, ignore_errors=True)


def declare(catalog: Path, state_home: Path, env: dict[str, str], host: str, workspace: Path,
            policies: dict[str, str], block: str, extra: str = "") -> dict[str, UpSeat]:
    """One seat per ``policies`` entry (identity -> ``resume`` word, "" for the default), all in
    ``workspace``, each declaring the driver ``block`` and ``extra`` (their KDL lines)."""
    seats = {}
    for identity, policy in policies.items():
        directory = catalog / "agents" / host / identity
        directory.mkdir(parents=True)
        knob = f'    resume "{policy}"\n' if policy else ""
        (directory / "agent.kdl").write_text(
            f'agent "{identity}" {{\n    workspace "{workspace}"\n{knob}{extra}{block}}}\n')
        seats[identity] = UpSeat(catalog, state_home, env, host, identity)
        seats[identity].scrollback = 0
    return seats


class Fleets:
    """A test's fleets (``make`` builds one with ``build(**policies)``), closed at the end."""

    def __init__(self, build: Callable[..., ResumeFleet]) -> None:
        self.build = build
        self.made: list[ResumeFleet] = []

    def __call__(self, **policies: str) -> ResumeFleet:
        self.made.append(self.build(policies))
        return self.made[-1]

    def close(self) -> None:
        for fleet in self.made:
            fleet.close()


def request_with(fake, marker: str) -> str:
    """The messages (as JSON text) of the last request the fake model received carrying ``marker``,
    waiting for it: a turn's idle is not proof that its request is the one already logged (under
    load, a fresh session's start-up transitions can end :meth:`ResumeFleet.converse`'s wait
    before the typed turn reaches the model; seen once in a fresh-clone run)."""

    def matching() -> list[str]:
        texts = [json.dumps((entry.get("body") or {}).get("messages", [])) for entry in fake.model_requests()]
        return [text for text in texts if marker in text]

    found = poll(matching, f"a request to the fake model carrying {marker!r}", WAIT)
    return found[-1]


def incarnation(seat: UpSeat) -> str:
    """The incarnation the seat's harness-state names (its wrapper's claim token)."""
    return seat.record("harness-state")["incarnation"]


def assert_one_incarnation(seat: UpSeat, predecessor: str) -> None:
    """After a relaunch: harness-state, harness-context (when there is one yet) and the
    resumable-session record all name the new incarnation — the claim removed the predecessor's
    context record (docs/records.md §Session boundary) — and none names ``predecessor``."""
    record = seat.session_record()
    state = seat.record("harness-state")
    context = seat.record("harness-context")
    assert record["incarnation"] == state["incarnation"] != predecessor
    assert context is None or context["incarnation"] == record["incarnation"], context


# --- the scenarios every resuming harness is proved by ------------------------------------------


def two_seats_resume_their_own(fleet: ResumeFleet, fake, harness: str,
                               stored: Callable[[str, str], bool] | None = None) -> None:
    """Seats ``alpha`` and ``beta`` (one workspace) converse, crash, reboot and come back each
    resumed into its own conversation, under one new incarnation per seat. ``stored(session_id,
    word)``, where given, tells whether the harness's own store already holds the conversation
    carrying ``word``: a reboot resumes only what the harness had written, so the crash waits
    for it (a harness that writes after its turn's end would otherwise lose it, and the seat then
    rightly falls back to a fresh session)."""
    alpha, beta = fleet.seats["alpha"], fleet.seats["beta"]
    words = {"alpha": "PELICAN-ALPHA", "beta": "WALRUS-BETA"}
    fleet.up()
    fleet.converse(alpha, f"remember the word {words['alpha']}")
    fleet.converse(beta, f"remember the word {words['beta']}")
    ids = {}
    for seat in (alpha, beta):
        record = fleet.wait_session(seat, "the published session", lambda record: record["sessionId"])
        assert (record["start"], record["harness"], record["runtimeId"]) == (
            "fresh", harness, f"{seat.host}.{seat.identity}")
        ids[seat.identity] = record["sessionId"]
    assert ids["alpha"] != ids["beta"]
    for seat in (alpha, beta) if stored is not None else ():
        poll(lambda: stored(ids[seat.identity], words[seat.identity]),
             f"{seat.identity}: the conversation in {harness}'s own store", WAIT, seat.screen)
    predecessors = {seat.identity: incarnation(seat) for seat in (alpha, beta)}
    assert all(seat.record("harness-context")["incarnation"] == predecessors[seat.identity] for seat in (alpha, beta))

    fleet.crash_and_reboot()
    fleet.up()
    for seat in (alpha, beta):
        record = fleet.wait_session(seat, "resumed", lambda record: record["start"] == "resumed")
        assert (record["sessionId"], record["resumedFrom"], record["lost"]) == (ids[seat.identity],) * 2 + ([],)
        assert_one_incarnation(seat, predecessors[seat.identity])
    fleet.converse(alpha, "which word, ALPHA-AGAIN")
    fleet.converse(beta, "which word, BETA-AGAIN")
    alpha_request = request_with(fake, "ALPHA-AGAIN")
    beta_request = request_with(fake, "BETA-AGAIN")
    assert "PELICAN-ALPHA" in alpha_request and "WALRUS-BETA" not in alpha_request
    assert "WALRUS-BETA" in beta_request and "PELICAN-ALPHA" not in beta_request


def never_starts_fresh(fleet: ResumeFleet, fake) -> None:
    """Seat ``gamma`` declares ``resume "never"``: after the crash and reboot it runs a new session
    and the model never sees the earlier conversation."""
    gamma = fleet.seats["gamma"]
    fleet.up()
    fleet.converse(gamma, "remember the word HERON-GAMMA")
    first = fleet.wait_session(gamma, "the published session", lambda record: record["sessionId"])["sessionId"]
    fleet.crash_and_reboot()
    fleet.up()
    fleet.converse(gamma, "which word, GAMMA-AGAIN")
    record = fleet.wait_session(gamma, "a new session", lambda record: record["sessionId"] not in (None, first))
    assert (record["start"], record["resumedFrom"], record["lost"]) == ("fresh", None, [])
    assert "HERON-GAMMA" not in request_with(fake, "GAMMA-AGAIN")


LOST_LINE = ("advisory: {seat}: session-lost: harness session {lost} could not be resumed; the seat started a fresh "
             "session (the lost id is kept in its resumable-session record and never retried)")


def refused_falls_back_once(fleet: ResumeFleet, fake, harness: str, lose: Callable[[str], None]) -> None:
    """Seat ``delta`` converses; after the crash and reboot, ``lose(session id)`` deletes it from
    the harness's store; the resume is refused and falls back once — the record, the
    driver-diagnostic stage, the enriched roster and Doctor say so — and the next relaunch resumes
    the fallback's own session, never the dead id."""
    delta = fleet.seats["delta"]
    name = f"{delta.host}.{delta.identity}"
    fleet.up()
    fleet.converse(delta, "remember the word OTTER-DELTA")
    dead = fleet.wait_session(delta, "the published session", lambda record: record["sessionId"])["sessionId"]
    # Lost while the seat is down: a live harness may still append to its store after a turn
    # (Claude rewrites the transcript it was resumed from), which would undo a deletion made earlier.
    fleet.crash_and_reboot()
    lose(dead)
    fleet.up()
    record = fleet.wait_session(delta, "the fallback", lambda record: record["start"] == "fallback")
    assert (record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (dead, [dead])
    diagnostic = delta.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"]) == ("failure", harness, "resume", "resumeRefused", "resumeAttempt")
    assert LOST_LINE.format(seat=name, lost=dead) in delta.st2("doctor", "--host", delta.host).stdout
    fleet.converse(delta, "which word, DELTA-AGAIN")
    assert "OTTER-DELTA" not in request_with(fake, "DELTA-AGAIN")
    fallback = fleet.wait_session(delta, "the fallback's own session",
                                  lambda record: record["sessionId"] not in (None, dead))["sessionId"]
    enriched = json.loads(delta.st2("agents", "--json", "--enrich", "--host", delta.host).stdout)
    (row,) = [row for row in enriched if row["identity"] == name]
    assert json.dumps(row["session"], separators=(",", ":")) == (
        '{"start":"fallback","sessionId":' + json.dumps(fallback) + ',"lostSessionIds":[' + json.dumps(dead) + ']}')

    # Bounded: the next relaunch resumes the fallback's session, never the dead id.
    fleet.crash_and_reboot()
    fleet.up()
    record = fleet.wait_session(delta, "the fallback session resumed", lambda record: record["start"] == "resumed")
    assert (record["sessionId"], record["resumedFrom"], [lost["sessionId"] for lost in record["lost"]]) == (
        fallback, fallback, [dead])
    assert "session-lost" not in delta.st2("doctor", "--host", delta.host).stdout
    fleet.converse(delta, "and now, DELTA-THIRD")
    request = request_with(fake, "DELTA-THIRD")
    assert "DELTA-AGAIN" in request and "OTTER-DELTA" not in request
