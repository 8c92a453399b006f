"""Lab tier: the real ``codex app-server`` 0.171.0 run by ``st2 up`` as a ``codex { … }`` seat —
its PTY task is ``st2 driver codex-session`` — against the loopback fake model: one message is
exactly one turn, the context shows Codex's window and the mirrored percent, an auto-compaction
adds one with trigger unknown, an approval blocks on a human until ``/approve`` is typed in the
PTY, a 401 reads providerAuth and a 429 does not; a replay of the wire the wrapper captured
reproduces the live numbers; SIGKILLing the wrapper between attempt and evidence duplicates
nothing; an unsupported version is refused; an approval answered from `st2 web`'s seat page in a
real Chromium through the wrapper's answer channel, a stale answer refused with nothing applied."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from codex_support import REPO, write_message

LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_codex  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)
from web_browser import browser_page  # noqa: E402
from web_support import WebServer  # noqa: E402

from st2.drivers.codex.context import used_percent  # noqa: E402
from st2.drivers.codex.pump import correlations_in  # noqa: E402

pytestmark = pytest.mark.lab

HOST = "labhost"


class Seat(UpSeat):
    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str], lab: Lab, identity: str = "coder") -> None:
        super().__init__(catalog, state_home, env, HOST, identity)
        self.lab = lab

    def state(self) -> tuple:
        value = self.record("harness-state") or {}
        return value.get("state"), value.get("blockedOn"), value.get("ask")

    def ledger(self) -> dict:
        path = next(iter(self.state_home.glob(f"**/delivery/{HOST}.{self.identity}/delivery-ledger.json")), None)
        return {entry["filename"]: entry for entry in json.loads(path.read_text())["entries"]} if path else {}


def make_seat(tmp_path: Path, fake: FakeModel, executable: str | None = None, seat_lines: str = "",
              identities: tuple[str, ...] = ("coder",)) -> Seat:
    harness = require_harness("codex")
    lab = Lab.create(tmp_path / "lab")
    env = configure_codex(lab, harness, fake, context_window=200000, approval_policy="on-request",
                          sandbox_mode="workspace-write")
    state_home = Path(tempfile.mkdtemp(prefix="st2cx-"))  # short: tmux sockets live under it
    catalog = tmp_path / "catalog"
    config = " ".join(f'"{item}"' for item in (
        "model_providers.fake.request_max_retries=0", "model_providers.fake.stream_max_retries=0",
        "model_auto_compact_token_limit=100000"))
    for identity in identities:  # every seat in one workspace and one CODEX_HOME
        directory = catalog / "agents" / HOST / identity
        (directory / "resources" / "inbox").mkdir(parents=True)
        (directory / "agent.kdl").write_text(
            f'agent "{identity}" {{\n    workspace "{lab.workspace}"\n{seat_lines}'
            f'    codex {{\n        executable "{executable or harness.executable}"\n        config {config}\n    }}\n}}\n')
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
                 "ST2_CODEX_FRAME_LOG": str(lab.logs / "wire.jsonl")}
    return Seat(catalog, state_home, env, lab)


@pytest.fixture
def seat(tmp_path: Path, fake_model: FakeModel):
    running = make_seat(tmp_path, fake_model)
    try:
        yield running
    finally:
        running.kill_pty()
        shutil.rmtree(running.state_home, ignore_errors=True)


def requests_carrying(fake: FakeModel, correlation: str) -> int:
    """Model requests whose newest user input is the delivery carrying ``correlation``."""
    return sum(1 for entry in fake.model_requests()
               if entry.get("wire") == "responses" and correlation in (entry["summary"].get("last_user_text") or ""))


def test_a_codex_seat_under_st2_up_is_driven_observed_and_measured(seat: Seat, fake_model: FakeModel) -> None:
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)

    # One message -> exactly one turn, above the 12,000-token baseline.
    fake_model.set_usage(input=101000, output=300, cache_read=1200)
    name = write_message(seat.directory, "first task", body="say hello")
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "consumed", "consumption", describe=seat.screen)
    poll(lambda: (seat.record("harness-context") or {}).get("usedTokens") == 101300, "the reading",
         describe=seat.screen)
    poll(lambda: seat.state()[0] == "idle", "idle after the turn", describe=seat.screen)
    [correlation] = [seat.ledger()[name]["correlation"]]
    assert requests_carrying(fake_model, correlation) == 1
    from st2.bus.guide import guide_text

    assert fake_model.carries(guide_text())  # the bus guide, as the thread's developer instructions
    context = seat.row()["context"]
    assert (context["harness"], context["usedTokens"], context["windowTokens"], context["model"],
            context["costUsd"]) == ("codex", 101300, 190000, None, None)  # 95 % of the configured 200000
    assert context["usedPercent"] == used_percent(190000, 101300) == 50
    assert (seat.directory / "resources" / "inbox" / name).exists()  # the pump never archives

    # A second big turn crosses model_auto_compact_token_limit: Codex compacts; one, trigger unknown.
    name = write_message(seat.directory, "second task", body="again")
    poll(lambda: (seat.record("harness-context") or {}).get("compactions") == 1, "the compaction", 120,
         seat.screen)
    poll(lambda: seat.state()[0] == "idle", "idle after compacting", describe=seat.screen)
    context = seat.row()["context"]
    assert (context["compactions"], context["lastCompactionTrigger"]) == (1, "unknown")
    fake_model.set_usage(input=20000, output=100, cache_read=1000)  # below the compaction limit again

    # An approval: blocked on a human, resolved by typing /approve in the PTY.
    target = seat.lab.workspace / "made-by-approval.txt"
    write_message(seat.directory, "tool", body=f"FAKE_ESCALATE: touch {target}")
    poll(lambda: seat.state()[1] == "human", "blockedOn human", describe=seat.screen)
    assert seat.state() == ("active", "human", "permission")
    assert seat.row()["observedState"]["blockedOn"] == "human"
    poll(lambda: "/approve" in seat.screen(), "the approval in the transcript", 30, seat.screen)
    seat.tmux("send-keys", "-t", seat.session, "-l", "/approve")
    seat.tmux("send-keys", "-t", seat.session, "Enter")
    poll(lambda: target.exists() and seat.state()[:2] == ("idle", "none"), "approved, run and idle",
         describe=seat.screen)
    # Recorded from the lab: 0.171.0 does populate activeFlags around an approval request.
    wire = [json.loads(line)["msg"] for line in (seat.lab.logs / "wire.jsonl").read_text().splitlines()]
    flags = [frame["params"]["status"].get("activeFlags") for frame in wire
             if frame.get("method") == "thread/status/changed"]
    assert ["waitingOnApproval"] in flags

    # A 429 is not auth; a 401 is (0.171.0 types it httpConnectionFailed with status 401).
    write_message(seat.directory, "quota", body="FAKE_HTTP_STATUS: 429")
    poll(lambda: "turn failed" in seat.screen(), "the 429 turn", describe=seat.screen)
    assert seat.record("driver-diagnostic") is None
    write_message(seat.directory, "auth", body="FAKE_HTTP_STATUS: 401")
    poll(lambda: (seat.record("driver-diagnostic") or {}).get("stage") == "providerAuth", "providerAuth",
         describe=seat.screen)
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"], diagnostic["producerVersion"]) == (
        "failure", "codex", "providerAuth", "providerAuthRejected", "turnResult", "0.171.0")
    write_message(seat.directory, "ordinary", body="hello again")
    poll(lambda: seat.record("driver-diagnostic") is None, "recovery on an ordinary turn end", describe=seat.screen)
    live = seat.record("harness-context")

    # Replay of the wire the wrapper captured reproduces the live numbers.
    replay_catalog = seat.catalog.parent / "replay"
    (replay_catalog / "agents" / HOST / "coder").mkdir(parents=True)
    (replay_catalog / "agents" / HOST / "coder" / "agent.kdl").write_text('agent "coder" {\n    codex\n}\n')
    replayed = subprocess.run([sys.executable, "-m", "st2", "--catalog", str(replay_catalog), "driver", "codex",
                               "replay", str(seat.lab.logs / "wire.jsonl"), "--identity", f"{HOST}.coder"],
                              capture_output=True, text=True, timeout=60, cwd=REPO)
    assert replayed.returncode == 0, replayed.stderr
    replay_record = json.loads((replay_catalog / "agents" / HOST / "coder" / "harness-context").read_text())
    fields = ("usedTokens", "windowTokens", "usedPercent", "sessionTotalTokens", "rateLimits", "compactions",
              "lastCompactionTrigger")
    assert {key: replay_record[key] for key in fields} == {key: live[key] for key in fields}
    capture_dir = os.environ.get("ST2_CODEX_CAPTURE_DIR")
    if capture_dir:  # how captures/codex/0.171.0/lab/wrapper-wire.jsonl was made
        text = (seat.lab.logs / "wire.jsonl").read_text().replace(str(seat.lab.root), "/LAB")
        text = text.replace(str(seat.catalog), "/CATALOG").replace(str(fake_model.port), "FAKEPORT")
        Path(capture_dir, "wrapper-wire.jsonl").write_text(text)
        Path(capture_dir, "wrapper-wire.live-context.json").write_text(json.dumps(live, indent=1) + "\n")


def test_sigkill_of_the_real_wrappers_between_attempt_and_evidence_duplicates_nothing(seat: Seat,
                                                                                      fake_model: FakeModel) -> None:
    names = []
    for round_number in range(2):
        seat.up()
        poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
        names.append(write_message(seat.directory, f"round {round_number}", body="hello"))
        poll(lambda: names[-1] in seat.ledger(), "the attempt owned", 30, seat.screen)  # ownership persisted
        # The wrapper itself (forked from the seat host, named by its pane anchor): killing the
        # anchor would run the wrapper's ordinary stop path, not a SIGKILL.
        os.kill(seat.wrapper(), signal.SIGKILL)  # between attempt and evidence
        seat.kill_pty()
    seat.up()
    poll(lambda: all(seat.ledger().get(name, {}).get("phase") == "consumed" for name in names), "both delivered",
         120, seat.screen)
    # A killed attempt settles as consumed either because its turn ran (the model saw it as the newest
    # user input) or because Codex had already persisted the input in the thread when the kill landed
    # ("correlated input present"), in which case the model sees it only in a later turn's
    # history. Which one happens depends on where the kill lands, so the proof takes a later turn and
    # reads the whole thread the model is sent: every message exactly once, none ever sent as a new turn twice.
    for name in names:
        assert requests_carrying(fake_model, seat.ledger()[name]["correlation"]) <= 1
    follow_up = write_message(seat.directory, "after the kills", body="hello again")
    poll(lambda: seat.ledger().get(follow_up, {}).get("phase") == "consumed", "the follow-up delivered", 120,
         seat.screen)
    correlation = seat.ledger()[follow_up]["correlation"]

    def follow_up_turn() -> dict | None:
        return next((entry for entry in fake_model.model_requests() if entry.get("wire") == "responses"
                     and correlation in (entry["summary"].get("last_user_text") or "")), None)

    # Consumed is Codex's evidence that the turn holds the input; its request reaches the model after.
    poll(lambda: follow_up_turn() is not None, "the follow-up's turn at the model", 60, seat.screen)
    turn = follow_up_turn()
    user_texts = [json.dumps(item.get("content")) for item in turn["body"]["input"]
                  if isinstance(item, dict) and item.get("role") == "user"]
    for name in names:
        stem = name[:-3]
        assert sum(f"st2:{stem}:" in text for text in user_texts) == 1, (stem, [text[:200] for text in user_texts])
    for entry in fake_model.model_requests():
        last = entry["summary"].get("last_user_text") or ""
        assert len(correlations_in(last)) == len(set(correlations_in(last)))


def test_an_unsupported_codex_is_refused_with_the_version_gate(tmp_path: Path, fake_model: FakeModel) -> None:
    fake = tmp_path / "codex-0.172"
    fake.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "codex-cli 0.172.0" && exit 0\nexec sleep 600\n')
    fake.chmod(0o755)
    running = make_seat(tmp_path, fake_model, executable=str(fake))
    try:
        running.up(session=False)  # the refused wrapper ends at once, taking its tmux server with it
        poll(lambda: running.record("driver-diagnostic"), "the versionGate diagnostic", 60, running.screen)
        diagnostic = running.row()["driverDiagnostic"]
        assert (diagnostic["stage"], diagnostic["reason"], diagnostic["producerVersion"], diagnostic["support"]) == (
            "versionGate", "unsupportedVersion", "0.172.0", "unsupported")
    finally:
        running.kill_pty()
        shutil.rmtree(running.state_home, ignore_errors=True)


# --- reboot survival (issue 24) -----------------------------------------------------------------


def wire(seat: Seat) -> list[dict]:
    return [json.loads(line) for line in (seat.lab.logs / "wire.jsonl").read_text().splitlines()]


def resumes_asked(seat: Seat) -> list[str]:
    """The thread ids the wrappers asked ``thread/resume`` of, over every incarnation (the frame log
    lives in the lab directory, which a reboot keeps)."""
    return [entry["msg"]["params"]["threadId"] for entry in wire(seat)
            if entry["dir"] == "out" and entry["msg"].get("method") == "thread/resume"]


def threads_started(seat: Seat) -> list[str]:
    """The thread ids ``thread/start`` answered, over every incarnation (request ids restart with
    each app-server, so each request is paired with the next answer carrying its id)."""
    started, waiting = [], None
    for entry in wire(seat):
        message = entry["msg"]
        if entry["dir"] == "out" and message.get("method") == "thread/start":
            waiting = message["id"]
        elif entry["dir"] == "in" and waiting is not None and message.get("id") == waiting and "method" not in message:
            started.append(message["result"]["thread"]["id"])
            waiting = None
    return started


def converse(seat: Seat, fake: FakeModel, body: str) -> dict:
    """Deliver ``body`` as one mail, which the recipient then archives (the pump never does); return
    the model request that carried it as its newest input."""
    name = write_message(seat.directory, "task", body=body)
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "consumed", f"{body!r} consumed", 120, seat.screen)
    poll(lambda: seat.state()[0] == "idle", "idle after the turn", describe=seat.screen)
    correlation = seat.ledger()[name]["correlation"]
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
    return next(entry for entry in fake.model_requests() if entry.get("wire") == "responses"
                and correlation in (entry["summary"].get("last_user_text") or ""))


def carried(request: dict, word: str) -> bool:
    """Whether ``word`` is in the conversation the model request carries (its input items)."""
    return word in json.dumps(request["body"]["input"])


def test_a_rebooted_codex_seat_resumes_its_own_thread_and_republishes_its_context(seat: Seat,
                                                                                  fake_model: FakeModel) -> None:
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
    word = f"PELICAN-{os.getpid()}"
    fake_model.set_usage(input=101000, output=300, cache_read=1200)
    converse(seat, fake_model, f"remember the word {word}")
    poll(lambda: (seat.record("harness-context") or {}).get("usedTokens") == 101300, "the reading",
         describe=seat.screen)
    [thread] = threads_started(seat)
    before = seat.session_record()
    assert (before["start"], before["sessionId"], before["harness"]) == ("fresh", thread, "codex")
    assert seat.enriched_session() == f'{{"start":"fresh","sessionId":"{thread}","lostSessionIds":[]}}'
    old_context = seat.record("harness-context")

    killed = seat.crash()
    seat.reboot()
    assert len(killed) >= 3   # the tmux server, the wrapper, the app-server
    assert not list(seat.state_home.glob("st2/scopes"))
    requests = len(fake_model.model_requests())
    fake_model.set_usage(input=20000, output=100, cache_read=1000)
    seat.up()
    # The claim removed the predecessor's context; the replayed thread/tokenUsage/updated
    # republishes it under the new incarnation before any new turn (no model request was made).
    poll(lambda: (seat.record("harness-context") or {}).get("incarnation") not in (None, old_context["incarnation"]),
         "the context republished by the resumed thread", describe=seat.screen)
    context = seat.record("harness-context")
    assert (context["usedTokens"], context["windowTokens"], context["usedPercent"]) == (101300, 190000, 50)
    assert len(fake_model.model_requests()) == requests
    after = seat.session_record()
    assert (after["start"], after["sessionId"], after["resumedFrom"], after["lost"]) == ("resumed", thread, thread, [])
    assert resumes_asked(seat) == [thread] and threads_started(seat) == [thread]
    # Asked without the history (0.171.0 deprecates the full hydration: no deprecationNotice then).
    assert [entry["msg"]["params"] for entry in wire(seat) if entry["msg"].get("method") == "thread/resume"] == [
        {"threadId": thread, "excludeTurns": True}]
    assert not [entry for entry in wire(seat) if entry["msg"].get("method") == "deprecationNotice"]
    assert seat.enriched_session() == f'{{"start":"resumed","sessionId":"{thread}","lostSessionIds":[]}}'

    # The next request the model receives carries the earlier conversation.
    request = converse(seat, fake_model, "what was the word?")
    assert carried(request, word)
    assert seat.record("driver-diagnostic") is None


def test_resume_never_starts_a_rebooted_codex_seat_fresh(tmp_path: Path, fake_model: FakeModel) -> None:
    running = make_seat(tmp_path, fake_model, seat_lines='    resume "never"\n')
    try:
        running.up()
        poll(lambda: running.state()[0] == "idle", "the bound thread idle", describe=running.screen)
        word = f"HERON-{os.getpid()}"
        converse(running, fake_model, f"remember the word {word}")
        running.reboot_and_up()
        poll(lambda: running.state()[0] == "idle", "a fresh thread idle", describe=running.screen)
        request = converse(running, fake_model, "what was the word?")
        assert not carried(request, word)
        assert resumes_asked(running) == [] and len(set(threads_started(running))) == 2
        assert running.session_record()["start"] == "fresh"
        assert running.enriched_session().startswith('{"start":"fresh","sessionId":"')
    finally:
        running.kill_pty()
        shutil.rmtree(running.state_home, ignore_errors=True)


def test_a_refused_codex_resume_falls_back_once_and_never_retries_the_dead_thread(seat: Seat,
                                                                                  fake_model: FakeModel) -> None:
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
    word = f"OSPREY-{os.getpid()}"
    converse(seat, fake_model, f"remember the word {word}")
    [dead] = threads_started(seat)
    seat.crash()
    seat.reboot()
    # The recorded thread is deleted from Codex's own store (its rollout under CODEX_HOME/sessions).
    rollouts = list((seat.lab.home / ".codex" / "sessions").rglob(f"rollout-*-{dead}.jsonl"))
    assert len(rollouts) == 1
    rollouts[0].unlink()

    seat.up()
    poll(lambda: (seat.record("driver-diagnostic") or {}).get("stage") == "resume", "the resume diagnostic",
         describe=seat.screen)
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"]) == ("failure", "codex", "resume", "resumeRefused", "resumeAttempt")
    poll(lambda: seat.state()[0] == "idle", "the fresh thread idle", describe=seat.screen)
    [_, fresh] = threads_started(seat)
    seat.assert_fell_back(fresh, dead)
    request = converse(seat, fake_model, "what was the word?")
    assert not carried(request, word)

    # The next relaunch resumes the fallback's thread; the dead one is never asked again.
    seat.reboot_and_up()
    poll(lambda: (seat.session_record() or {}).get("start") == "resumed", "the fallback's thread resumed",
         describe=seat.screen)
    assert resumes_asked(seat) == [dead, fresh]
    poll(lambda: seat.record("driver-diagnostic") is None, "the superseded loss cleared", describe=seat.screen)
    seat.assert_resumed_past(fresh, dead)


def test_a_fresh_thread_after_st2_down_settles_the_predecessors_ambiguous_delivery(seat: Seat,
                                                                                   fake_model: FakeModel) -> None:
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
    name = write_message(seat.directory, "in flight", body="hello")
    poll(lambda: name in seat.ledger(), "the attempt owned", 30, seat.screen)
    os.kill(seat.wrapper(), signal.SIGKILL)  # the wrapper itself (see above), between attempt and evidence
    seat.kill_pty()
    down = seat.st2("down", "--host", HOST, "coder")
    assert down.returncode == 0, down.stdout + down.stderr
    seat.up()   # st2 down was asked: a fresh thread, never a resume
    poll(lambda: len(threads_started(seat)) == 2, "the fresh thread", describe=seat.screen)
    # (The kill can land after Codex already reported the input: then it was consumed before.)
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "consumed", "the predecessor's attempt settled", 120,
         seat.screen)
    [first, second] = threads_started(seat)
    assert resumes_asked(seat) == [] and first != second
    # Settled from the first thread's own history (or absent there and retried once on the new
    # one): the seat is not held, the next mail goes through, and nothing reached the model twice.
    follow_up = write_message(seat.directory, "after down", body="hello again")
    poll(lambda: seat.ledger().get(follow_up, {}).get("phase") == "consumed", "the follow-up delivered", 120,
         seat.screen)
    assert requests_carrying(fake_model, seat.ledger()[name]["correlation"]) <= 1
    assert seat.ledger()[follow_up]["binding"] == second


def test_two_rebooted_codex_seats_in_one_workspace_never_swap_threads(tmp_path: Path, fake_model: FakeModel) -> None:
    first = make_seat(tmp_path, fake_model, identities=("coder", "second"))
    second = Seat(first.catalog, first.state_home, first.env, first.lab, "second")
    try:
        for seat in (first, second):   # one pass launches both; the second finds its own socket
            seat.up()
            poll(lambda: seat.state()[0] == "idle", f"{seat.identity}: idle", describe=seat.screen)
        words = {first.identity: f"KESTREL-{os.getpid()}", second.identity: f"PUFFIN-{os.getpid()}"}
        for seat in (first, second):
            converse(seat, fake_model, f"remember the word {words[seat.identity]}")
        threads = {seat.identity: seat.session_record()["sessionId"] for seat in (first, second)}
        assert len(set(threads.values())) == 2
        for seat in (first, second):
            seat.crash()
        first.reboot()
        for seat in (first, second):
            seat.up()
        for seat in (first, second):
            poll(lambda: (seat.session_record() or {}).get("start") == "resumed", f"{seat.identity}: resumed",
                 describe=seat.screen)
            poll(lambda: seat.state()[0] == "idle", f"{seat.identity}: idle", describe=seat.screen)
            assert seat.session_record()["sessionId"] == threads[seat.identity]
        for seat, other in ((first, second), (second, first)):
            request = converse(seat, fake_model, "what was the word?")
            assert carried(request, words[seat.identity]) and not carried(request, words[other.identity])
    finally:
        for seat in (first, second):
            seat.kill_pty()
        shutil.rmtree(first.state_home, ignore_errors=True)



def test_a_codex_approval_is_answered_from_the_page_and_a_stale_answer_is_refused(tmp_path, fake_model) -> None:
    seat = make_seat(tmp_path, fake_model)
    server = None
    try:
        seat.up()
        poll(lambda: seat.state()[0] == "idle", "the bound thread idle", describe=seat.screen)
        server = WebServer(seat.catalog, HOST, seat.env)
        with browser_page(server) as page:
            target = seat.lab.workspace / "made-from-the-page.txt"
            write_message(seat.directory, "tool", body=f"FAKE_ESCALATE: touch {target}")
            poll(lambda: seat.state()[1] == "human", "blockedOn human", describe=seat.screen)
            page.goto(f"{server.url}/seat/{HOST}.coder")
            # The server may render the page before its own watch has re-read the record the
            # test saw; the page then reloads itself when the seat's row turns blocked.
            page.wait_for_selector("#blocked-on form.ask")
            form = page.locator("#blocked-on form.ask")
            assert form.count() == 1, page.content()
            assert "touch" in form.locator("p").inner_text()          # what Codex asks, in words
            digest = form.locator("input[name=digest]").get_attribute("value")
            incarnation = form.locator("input[name=incarnation]").get_attribute("value")

            def post(**fields) -> str:
                """Answer with the browser's session and a fresh token; the outcome the page shows."""
                page.goto(f"{server.url}/seat/{HOST}.coder")
                token = page.locator("#message input[name=csrf]").get_attribute("value")
                answer = page.request.post(f"{server.url}/seat/{HOST}.coder/answer",
                                           form={"csrf": token, "verb": "approve", **fields})
                assert answer.ok, answer.status
                shown = re.search(r'<p id="outcome">([^<]*)</p>', answer.text())
                return html.unescape(shown.group(1)) if shown else answer.text()

            changed = ("0" if digest[0] != "0" else "1") + digest[1:]
            assert post(digest=changed, incarnation=incarnation).startswith("refused: that ask is no longer pending")
            assert post(digest=digest, incarnation="another").startswith("refused: the seat's harness was restarted")
            assert seat.state()[1] == "human" and not target.exists()   # nothing applied

            page.goto(f"{server.url}/seat/{HOST}.coder")
            with page.expect_navigation():
                page.locator("#blocked-on form.ask button[value=approve]").click()
            assert page.locator("#outcome").inner_text() == "approved"
            poll(lambda: target.exists() and seat.state()[:2] == ("idle", "none"), "approved, run and idle",
                 describe=seat.screen)
            assert post(digest=digest, incarnation=incarnation).startswith("refused: that ask is no longer pending")
    finally:
        if server is not None:
            server.stop()
        seat.kill_pty()
        shutil.rmtree(seat.state_home, ignore_errors=True)
