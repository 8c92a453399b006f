"""Lab tier: the real ``opencode serve`` 1.18.33 run by ``st2 up`` as an ``opencode { … }`` seat —
its PTY task is ``st2 driver opencode-session`` — against the loopback fake model: one mail is
exactly one model request and its ledger entry reaches ``persisted`` (read back from the server);
the context is the assistant total over the providers window; one summarize is one compaction; a
permission blocks on a human until ``/approve`` is typed, and another until it is answered from
`st2 web`'s seat page (a changed ask's answer refused first); killing the server mid-turn yields the ``sse``
diagnostic, cleared when the wrapper has served a new one and its stream connects; a 401 reads
``providerAuth`` until an ordinary turn; ``st2 down`` stops the attached TUI, the wrapper and the
server; a wrapper SIGKILLed between a delivery's attempt and its read-back duplicates nothing.
Each test starts its own seat (an ``opencode serve`` costs seconds of CPU to start), so proofs
that can share one seat run as steps of one test."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
LAB_DIR = REPO / "tests" / "lab"
CODEX_TESTS = REPO / "tests" / "drivers" / "codex"
for folder in (LAB_DIR, CODEX_TESTS):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

from codex_support import write_message  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_opencode  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model, poll  # noqa: E402,F401 (fake_model: the fixture)
from web_support import Client, WebServer, csrf_tokens  # noqa: E402

pytestmark = pytest.mark.lab

HOST = "labhost"


class Seat(UpSeat):
    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str], lab: Lab) -> None:
        super().__init__(catalog, state_home, env, HOST, "oc")
        self.lab = lab

    def state(self) -> tuple:
        value = self.record("harness-state") or {}
        return value.get("state"), value.get("blockedOn"), value.get("ask")

    def ledger(self) -> dict:
        path = next(iter(self.state_home.glob(f"**/delivery/{HOST}.oc/delivery-ledger.json")), None)
        return {entry["filename"]: entry for entry in json.loads(path.read_text())["entries"]} if path else {}

    def server(self) -> dict:
        path = next(iter(self.state_home.glob(f"**/opencode/{HOST}.oc/server.json")))
        return json.loads(path.read_text())

    def launch(self) -> str | None:
        """The password of the launch whose server server.json names (a new one per wrapper
        launch), or None before any server has listened."""
        path = next(iter(self.state_home.glob(f"**/opencode/{HOST}.oc/server.json")), None)
        return json.loads(path.read_text())["password"] if path is not None else None

    def call(self, method: str, path: str, body=None):
        server = self.server()
        token = base64.b64encode(f"opencode:{server['password']}".encode()).decode()
        request = urllib.request.Request(f"http://127.0.0.1:{server['port']}{path}", method=method,
                                         data=None if body is None else json.dumps(body).encode(),
                                         headers={"Authorization": f"Basic {token}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            text = response.read().decode()
        return json.loads(text) if text.strip() else None


def _seat(tmp_path: Path, fake_model: FakeModel, view: str | None):
    harness = require_harness("opencode")
    lab = Lab.create(tmp_path / "lab")
    env = configure_opencode(lab, harness, fake_model, permission={"bash": "ask"})
    state_home = Path(tempfile.mkdtemp(prefix="st2oc-"))
    catalog = tmp_path / "catalog"
    directory = catalog / "agents" / HOST / "oc"
    (directory / "resources" / "inbox").mkdir(parents=True)
    field = f'        view "{view}"\n' if view else ""
    (directory / "agent.kdl").write_text(
        f'agent "oc" {{\n    workspace "{lab.workspace}"\n'
        f'    opencode {{\n        executable "{harness.executable}"\n        model "fake/fake-model"\n{field}    }}\n}}\n')
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"}
    running = Seat(catalog, state_home, env, lab)
    try:
        yield running
    finally:
        running.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)


@pytest.fixture
def seat(tmp_path: Path, fake_model: FakeModel):
    """A seat whose pane is the wrapper's transcript (``view "transcript"``): its keyboard grammar."""
    yield from _seat(tmp_path, fake_model, "transcript")


@pytest.fixture
def attached_seat(tmp_path: Path, fake_model: FakeModel):
    """A seat declaring no view: opencode's own TUI attached to the served session."""
    yield from _seat(tmp_path, fake_model, None)


def requests_carrying(fake: FakeModel, stem: str) -> int:
    """Agent turns whose newest user input is the delivery of ``stem``. opencode also asks the
    model for a session title from the first user message; that request carries no tools."""
    return sum(1 for entry in fake.model_requests()
               if entry.get("summary", {}).get("tool_names")
               and f"st2:{stem}:" in (entry.get("summary", {}).get("last_user_text") or ""))


def test_an_opencode_seat_under_st2_up_is_delivered_observed_and_measured(seat: Seat, fake_model: FakeModel) -> None:
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the served session idle", 240, seat.screen)

    name = write_message(seat.directory, "first task", body="say hello")
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "persisted", "persisted by read-back", 120, seat.screen)
    # The transcript twin (``view "transcript"``) shows the served session's transcript, not opencode's TUI.
    poll(lambda: "opencode: Hello from the fake model." in seat.screen(), "the answer in the transcript", 60,
         seat.screen)
    screen = seat.screen()
    assert "st2: opencode serve listening on 127.0.0.1:" in screen and "ctrl+p commands" not in screen
    poll(lambda: (seat.record("harness-context") or {}).get("usedTokens") == 9942, "the reading", 60, seat.screen)
    poll(lambda: seat.state()[0] == "idle", "idle after the turn", 60, seat.screen)
    assert requests_carrying(fake_model, name[:-3]) == 1
    from st2.bus.guide import guide_text

    assert fake_model.carries(guide_text())  # the bus guide, as the prompt's system prompt
    context = seat.row()["context"]
    assert (context["harness"], context["usedTokens"], context["windowTokens"], context["usedPercent"],
            context["model"]) == ("opencode", 9942, 200000, 4.971, "fake/fake-model")
    assert (seat.directory / "resources" / "inbox" / name).exists()  # the pump never archives

    # One summarize is one compaction, trigger unknown; the summary's own tokens are not the reading.
    session = seat.server()["sessionID"]
    seat.call("POST", f"/session/{session}/summarize", {"providerID": "fake", "modelID": "fake-model"})
    poll(lambda: (seat.record("harness-context") or {}).get("compactions") == 1, "the compaction", 120, seat.screen)
    context = seat.row()["context"]
    assert (context["compactions"], context["lastCompactionTrigger"]) == (1, "unknown")

    # A permission: blocked on a human with its ask, cleared by /approve typed in the PTY.
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
    tool = write_message(seat.directory, "tool", body="FAKE_TOOL: echo opencode-tool-ok")
    poll(lambda: seat.state()[1] == "human", "blockedOn human", 120, seat.screen)
    assert seat.state() == ("active", "human", "permission")
    assert seat.row()["observedState"]["blockedOn"] == "human"
    poll(lambda: "/approve" in seat.screen(), "the ask in the transcript", 30, seat.screen)
    seat.tmux("send-keys", "-t", seat.session, "-l", "/approve")
    seat.tmux("send-keys", "-t", seat.session, "Enter")
    poll(lambda: seat.state()[:2] == ("idle", "none"), "approved and idle", 120, seat.screen)

    # Killing the server mid-turn (its turn waiting on a second permission): the sse diagnostic.
    poll(lambda: seat.ledger().get(tool, {}).get("phase") == "persisted", "the tool mail read back", 60, seat.screen)
    os.rename(seat.directory / "resources" / "inbox" / tool, seat.directory / "resources" / "archive" / tool)

    # A permission answered from st2 web's seat page through the wrapper's answer channel; an
    # answer naming a changed ask is refused first, with nothing applied.
    from_page = write_message(seat.directory, "tool from the page", body="FAKE_TOOL: echo opencode-tool-page")
    poll(lambda: seat.state() == ("active", "human", "permission"), "asking again", 120, seat.screen)
    server = WebServer(seat.catalog, HOST, seat.env)
    try:
        client = Client(server.url)
        assert client.pair(server.pair_link()) == 200
        page = poll(lambda: (lambda text: text if 'class="ask"' in text else None)(
            client.request(f"/seat/{HOST}.oc")[2]), "the ask on the seat page", 30)
        fields = {name: re.search(rf'name="{name}" value="([^"]*)"', page.split('class="ask"', 1)[1]).group(1)
                  for name in ("csrf", "digest", "incarnation", "channel")}
        assert "bash" in page.split('class="ask"', 1)[1].split("</p>", 1)[0]    # what opencode asks, in words

        def answer(**changed) -> str:
            token = csrf_tokens(client.request(f"/seat/{HOST}.oc")[2])[0]
            status, headers, _ = client.request(f"/seat/{HOST}.oc/answer",
                                                {**fields, "csrf": token, "verb": "approve", **changed})
            assert status == 303, status
            shown = re.search(r'<p id="outcome">([^<]*)</p>', client.request(f"/seat/{HOST}.oc")[2])
            return html.unescape(shown.group(1))

        changed = ("0" if fields["digest"][0] != "0" else "1") + fields["digest"][1:]
        assert answer(digest=changed).startswith("refused: that ask is no longer pending")
        assert seat.state() == ("active", "human", "permission")
        assert answer() == "approved"
        poll(lambda: seat.state()[:2] == ("idle", "none"), "approved from the page and idle", 120, seat.screen)
        assert answer().startswith("refused: that ask is no longer pending")       # answered: never reapplied
    finally:
        server.stop()
    poll(lambda: seat.ledger().get(from_page, {}).get("phase") == "persisted", "the page's mail read back", 60,
         seat.screen)
    os.rename(seat.directory / "resources" / "inbox" / from_page, seat.directory / "resources" / "archive" / from_page)
    again = write_message(seat.directory, "tool again", body="FAKE_TOOL: echo opencode-tool-again")
    poll(lambda: seat.state() == ("active", "human", "permission"), "mid-turn, asking", 120, seat.screen)
    server_pid = seat.server()["pid"]
    os.killpg(server_pid, signal.SIGKILL)
    poll(lambda: (seat.record("driver-diagnostic") or {}).get("stage") == "sse", "the sse diagnostic", 60,
         seat.screen)
    assert seat.row()["driverDiagnostic"]["reason"] in ("sseDisconnected", "sseConnectFailed")
    # The wrapper serves a new server; its stream's connect clears the stage (and only that stage).
    poll(lambda: seat.record("driver-diagnostic") is None and seat.server()["pid"] != server_pid,
         "the sse stage cleared by the restarted server's stream", 240, seat.screen)
    poll(lambda: seat.state()[0] == "idle", "idle on the restarted server", 120, seat.screen)
    ordinary = assert_a_rejected_credential_reads_provider_auth_until_an_ordinary_turn(seat, again)
    assert_sigkills_of_the_real_wrapper_between_attempt_and_read_back_duplicate_nothing(seat, fake_model, ordinary)


def assert_a_rejected_credential_reads_provider_auth_until_an_ordinary_turn(seat: Seat, held: str) -> str:
    """A 401 from the model publishes ``providerAuth`` until a turn reaches its ordinary end. The
    mail ``held`` (delivered before) is read back and archived first: its hold is released by the
    recipient's archive alone. Returns the ordinary turn's mail (delivered, not yet archived)."""
    poll(lambda: seat.ledger().get(held, {}).get("phase") == "persisted", "the held mail read back", 120, seat.screen)
    os.rename(seat.directory / "resources" / "inbox" / held, seat.directory / "resources" / "archive" / held)
    rejected = write_message(seat.directory, "auth", body="FAKE_HTTP_STATUS: 401")
    poll(lambda: (seat.record("driver-diagnostic") or {}).get("stage") == "providerAuth", "providerAuth", 120,
         seat.screen)
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"], diagnostic["producerVersion"]) == (
        "failure", "opencode", "providerAuth", "providerAuthRejected", "turnResult", "1.18.33")
    poll(lambda: seat.ledger().get(rejected, {}).get("phase") == "persisted", "the prompt read back", 60, seat.screen)
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / rejected, seat.directory / "resources" / "archive" / rejected)
    ordinary = write_message(seat.directory, "ordinary", body="hello again")
    poll(lambda: seat.record("driver-diagnostic") is None, "recovery on an ordinary turn end", 120, seat.screen)
    return ordinary


def assert_sigkills_of_the_real_wrapper_between_attempt_and_read_back_duplicate_nothing(
        seat: Seat, fake_model: FakeModel, held: str) -> None:
    """Twice, the wrapper is SIGKILLed between a delivery's attempt and its read-back, and the next
    launch settles the attempt by reading it back (a retry only when it is absent): each mail is
    exactly once in the session's durable history and never twice before the model. The seat is up
    and idle, with ``held`` (delivered) still in its inbox."""
    pending: list[str] = [held]   # delivered, not yet archived by the recipient
    settled: list[str] = []
    killed = None             # the password of the launch the last round killed (each launch has its own)
    for round_number in range(2):
        if round_number:
            seat.up()
        # Only the successor's own launch (its server listening, server.json rewritten) is waited on:
        # until then server.json and harness-state are the killed launch's.
        poll(lambda: seat.launch() not in (None, killed) and seat.state()[0] == "idle", "the served session idle",
             240, seat.screen)
        # The successor settles its predecessor's attempt by reading back (a retry only when it is
        # absent); the recipient then archives it, which releases the hold (the pump never does).
        poll(lambda: all(seat.ledger().get(name, {}).get("phase") == "persisted" for name in pending),
             "the predecessor's attempt read back", 240, seat.screen)
        for name in pending:
            (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
            os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
        settled += pending[round_number == 0:]   # ``held`` was the earlier proofs' mail
        pending = [write_message(seat.directory, f"round {round_number}", body="hello")]
        poll(lambda: pending[0] in seat.ledger(), "the attempt owned", 60, seat.screen)  # ownership persisted
        # The wrapper itself, not the pane: an opencode seat's wrapper is forked from the seat host
        # and the pane is its anchor, whose death runs the wrapper's stop path (which can still read
        # the attempt back, and writes `ended`). SIGKILLed, nothing of the launch runs on; its server
        # dies with it (PR_SET_PDEATHSIG).
        wrapper, killed = seat.wrapper(), seat.launch()
        os.kill(wrapper, signal.SIGKILL)  # between attempt and read-back
        poll(lambda: gone(wrapper), "the wrapper gone", 30)
        assert seat.state()[0] != "ended"   # no stop path ran
        seat.kill_pty()
    seat.up()
    poll(lambda: seat.launch() not in (None, killed) and seat.ledger().get(pending[0], {}).get("phase") == "persisted",
         "the last attempt read back by the successor's launch", 240, seat.screen)
    everything = settled + pending
    assert len(everything) == 2
    # Exactly once in the session's durable history; never twice before the model (a prompt the
    # kill caught after it was persisted but before the model was asked is persisted, not lost).
    history = seat.call("GET", f"/session/{seat.server()['sessionID']}/message")
    texts = [part.get("text", "") for message in history if message["info"]["role"] == "user"
             for part in message["parts"] if part.get("type") == "text"]
    assert [sum(text.count(f"st2:{name[:-3]}:") for text in texts) for name in everything] == [1, 1]
    assert all(requests_carrying(fake_model, name[:-3]) <= 1 for name in everything)


def test_an_opencode_seat_shows_opencode_s_own_tui_attached_to_the_served_session(attached_seat: Seat,
                                                                                   fake_model: FakeModel) -> None:
    seat = attached_seat
    seat.scrollback = 0
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the served session idle", 240, seat.screen)
    # opencode's TUI, not the transcript: its footer and version, and no wrapper line over it.
    poll(lambda: "ctrl+p commands" in seat.screen() and "OpenCode 1.18.33" in seat.screen(),
         "opencode's own TUI in the pane", 120, seat.screen)
    assert "st2: opencode serve listening" not in seat.screen()
    # Mail still travels the ledger, exactly once, and the attached TUI shows that same session.
    name = write_message(seat.directory, "first task", body="say hello")
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "persisted", "persisted by read-back", 120, seat.screen)
    poll(lambda: f"st2-delivery: st2:{name[:-3]}:" in seat.screen() and "Hello from the fake model." in seat.screen(),
         "the delivery and its answer in the attached TUI", 60, seat.screen)
    # The model's answer streams into the TUI before the request is logged: wait for the turn to end.
    poll(lambda: seat.state()[0] == "idle" and requests_carrying(fake_model, name[:-3]) == 1, "idle after one turn",
         60, seat.screen)
    assert requests_carrying(fake_model, name[:-3]) == 1
    assert len(seat.ledger()) == 1
    # The attached TUI exits (ctrl+c twice is opencode's quit): the seat lives on in the transcript view.
    pid = seat.server()["pid"]
    for _ in range(2):
        seat.tmux("send-keys", "-t", seat.session, "C-c")
    poll(lambda: "the transcript view follows" in seat.screen(), "the transcript after the TUI exits", 60,
         seat.screen)
    assert seat.server()["pid"] == pid and seat.sessions()


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (gone, or a zombie its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except FileNotFoundError:
        return True


def attach_children(seat: Seat) -> list[int]:
    """The pane's ``opencode attach`` processes (children of the pane process: the anchor that
    runs the TUI for the forked wrapper)."""
    anchor = int(seat.tmux("display-message", "-p", "-t", seat.session, "#{pane_pid}").strip())
    children = [int(pid) for pid in Path(f"/proc/{anchor}/task/{anchor}/children").read_text().split()]
    found = []
    for pid in children:
        try:
            if b"attach" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
        except FileNotFoundError:
            pass
    return found


def test_a_restarted_server_gets_a_new_attached_tui_on_its_own_port(attached_seat: Seat,
                                                                     fake_model: FakeModel) -> None:
    seat = attached_seat
    seat.scrollback = 0
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the served session idle", 240, seat.screen)
    poll(lambda: "ctrl+p commands" in seat.screen(), "opencode's own TUI in the pane", 120, seat.screen)
    first = seat.server()
    [old_tui] = attach_children(seat)
    os.killpg(first["pid"], signal.SIGKILL)
    # The wrapper serves a new server (new port and password) and attaches a new TUI to it.
    poll(lambda: seat.server()["pid"] != first["pid"] and seat.record("driver-diagnostic") is None,
         "the restarted server's stream connected", 240, seat.screen)
    poll(lambda: attach_children(seat) and attach_children(seat)[0] != old_tui, "a new attached TUI", 60, seat.screen)
    [new_tui] = attach_children(seat)
    cmdline = Path(f"/proc/{new_tui}/cmdline").read_bytes().split(b"\0")
    assert f"http://127.0.0.1:{seat.server()['port']}".encode() in cmdline
    poll(lambda: "ctrl+p commands" in seat.screen(), "opencode's own TUI on the restarted server", 120, seat.screen)
    # Mail still goes through the ledger to the new server, exactly once.
    name = write_message(seat.directory, "after the restart", body="say hello")
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "persisted", "persisted by read-back", 120, seat.screen)
    poll(lambda: seat.state()[0] == "idle" and requests_carrying(fake_model, name[:-3]) == 1, "idle after one turn",
         60, seat.screen)
    assert_st2_down_stops_the_attached_tui_the_wrapper_and_the_server(seat)


def assert_st2_down_stops_the_attached_tui_the_wrapper_and_the_server(seat: Seat) -> None:
    """``st2 down`` of an attached seat stops the pane's anchor and the TUI it runs, the wrapper
    (forked from the seat host) and the server the wrapper runs; the seat reads ``ended``."""
    poll(lambda: "ctrl+p commands" in seat.screen(), "opencode's own TUI in the pane", 120, seat.screen)
    # The pane process is the anchor running opencode's TUI; the wrapper is forked from the seat
    # host (st2.drivers.opencode.attach_anchor) and runs the server.
    anchor = int(seat.tmux("display-message", "-p", "-t", seat.session, "#{pane_pid}").strip())
    words = Path(f"/proc/{anchor}/cmdline").read_bytes().split(b"\0")
    assert words[3] == b"st2-session-anchor", words
    wrapper = int(words[4])
    server = seat.server()["pid"]
    assert server in [int(pid) for pid in Path(f"/proc/{wrapper}/task/{wrapper}/children").read_text().split()]
    attached = attach_children(seat)
    assert len(attached) == 1
    down = seat.st2("down", "--host", HOST, "oc")
    assert down.returncode == 0, down.stdout + down.stderr

    poll(lambda: all(gone(pid) for pid in (anchor, wrapper, server, *attached)), "everything stopped", 60, seat.screen)
    assert (seat.record("harness-state") or {}).get("state") == "ended"


# --- reboot survival (issue 24) -----------------------------------------------------------------


def converse(seat: Seat, fake: FakeModel, body: str) -> dict:
    """Deliver ``body`` as one mail, read back as persisted, which the recipient then archives
    (which releases the hold; the pump never archives); return the agent turn's model request
    that carried it as its newest input."""
    name = write_message(seat.directory, "task", body=body)
    poll(lambda: seat.ledger().get(name, {}).get("phase") == "persisted", f"{body!r} persisted", 180, seat.screen)
    poll(lambda: seat.state()[0] == "idle" and requests_carrying(fake, name[:-3]) == 1, "idle after one turn", 120,
         seat.screen)
    (seat.directory / "resources" / "archive").mkdir(exist_ok=True)
    os.rename(seat.directory / "resources" / "inbox" / name, seat.directory / "resources" / "archive" / name)
    return next(entry for entry in fake.model_requests() if entry.get("summary", {}).get("tool_names")
                and f"st2:{name[:-3]}:" in (entry["summary"].get("last_user_text") or ""))


def carried(request: dict, word: str) -> bool:
    """Whether ``word`` is in the conversation the model request carries (its messages)."""
    return word in json.dumps(request["body"]["messages"])


def test_a_rebooted_opencode_seat_resumes_its_own_session_and_a_refused_resume_falls_back_once(
        seat: Seat, fake_model: FakeModel) -> None:
    """One seat, five launches: a fresh session; after a simulated reboot, that session resumed;
    after the resumed session is deleted from opencode's own store and the host reboots again, a
    loud fallback to a fresh session; after a third reboot, the fallback's session resumed, the
    dead one never asked again; and once the seat declares ``resume "never"``, a fourth reboot
    starts it fresh. One seat serves all three proofs: a launch of the real opencode costs several
    seconds of CPU."""
    seat.up()
    poll(lambda: seat.state()[0] == "idle", "the served session idle", 240, seat.screen)
    word = f"PELICAN-{os.getpid()}"
    converse(seat, fake_model, f"remember the word {word}")
    session = seat.server()["sessionID"]
    old_context = poll(lambda: seat.record("harness-context"), "the reading", 60, seat.screen)
    before = seat.session_record()
    assert (before["start"], before["sessionId"], before["harness"]) == ("fresh", session, "opencode")
    assert seat.enriched_session() == f'{{"start":"fresh","sessionId":"{session}","lostSessionIds":[]}}'

    killed = seat.crash()
    seat.reboot()
    assert len(killed) >= 3   # the tmux server, the wrapper, opencode serve
    assert not list(seat.state_home.glob("st2/scopes"))
    requests = len(fake_model.model_requests())
    seat.up()
    poll(lambda: (seat.session_record() or {}).get("start") == "resumed", "the session resumed", 240, seat.screen)
    poll(lambda: seat.state()[0] == "idle", "the resumed session idle", 240, seat.screen)
    # The claim removed the predecessor's context; the resumed session's history republishes it
    # under the new incarnation before any new turn (no model request was made).
    poll(lambda: (seat.record("harness-context") or {}).get("incarnation") not in (None, old_context["incarnation"]),
         "the context republished from the resumed session", 60, seat.screen)
    context = seat.record("harness-context")
    assert (context["usedTokens"], context["windowTokens"], context["usedPercent"], context["model"]) == (
        old_context["usedTokens"], 200000, old_context["usedPercent"], "fake/fake-model")
    assert len(fake_model.model_requests()) == requests
    after = seat.session_record()
    assert (after["sessionId"], after["resumedFrom"], after["lost"]) == (session, session, [])
    assert seat.server()["sessionID"] == session
    assert seat.enriched_session() == f'{{"start":"resumed","sessionId":"{session}","lostSessionIds":[]}}'
    # The next request the model receives carries the earlier conversation.
    request = converse(seat, fake_model, "what was the word?")
    assert carried(request, word)
    assert seat.record("driver-diagnostic") is None
    assert_a_refused_resume_falls_back_once_and_never_retries_the_dead_session(seat, fake_model, word)
    assert_resume_never_starts_the_rebooted_seat_fresh(seat, fake_model)


def assert_resume_never_starts_the_rebooted_seat_fresh(seat: Seat, fake_model: FakeModel) -> None:
    """The seat, resumed and idle, remembers a word; it then declares ``resume "never"`` and the
    host reboots: the next launch starts a fresh session that never carries the word, and the
    session it left is not counted lost (the sessions lost before stay named)."""
    word = f"HERON-{os.getpid()}"
    converse(seat, fake_model, f"remember the word {word}")
    first = seat.server()["sessionID"]
    lost = json.loads(seat.enriched_session())["lostSessionIds"]
    assert len(lost) == 1 and first not in lost   # the refused resume's dead session
    declaration = seat.directory / "agent.kdl"
    text = declaration.read_text()
    assert 'resume "never"' not in text
    declaration.write_text(text.replace("    opencode {\n", '    resume "never"\n    opencode {\n', 1))
    seat.reboot_and_up()
    poll(lambda: seat.state()[0] == "idle", "a fresh session idle", 240, seat.screen)
    request = converse(seat, fake_model, "what was the word?")
    assert not carried(request, word)
    assert seat.server()["sessionID"] != first and seat.session_record()["start"] == "fresh"
    assert seat.enriched_session() == (f'{{"start":"fresh","sessionId":"{seat.server()["sessionID"]}",'
                                       f'"lostSessionIds":{json.dumps(lost, separators=(",", ":"))}}}')


def assert_a_refused_resume_falls_back_once_and_never_retries_the_dead_session(seat: Seat, fake_model: FakeModel,
                                                                             word: str) -> None:
    """The seat's served session, which carries ``word``, is deleted; the next launches fall back
    once, loudly, then resume the fallback's session."""
    dead = seat.server()["sessionID"]
    # The recorded session is deleted from opencode's own store, through its own API.
    assert seat.call("DELETE", f"/session/{dead}") is True
    seat.crash()
    seat.reboot()

    seat.up()
    poll(lambda: (seat.record("driver-diagnostic") or {}).get("stage") == "resume", "the resume diagnostic", 240,
         seat.screen)
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"]) == ("failure", "opencode", "resume", "resumeRefused", "resumeAttempt")
    poll(lambda: seat.state()[0] == "idle", "the fresh session idle", 240, seat.screen)
    fresh = seat.server()["sessionID"]
    assert fresh != dead
    seat.assert_fell_back(fresh, dead)
    request = converse(seat, fake_model, "what was the word?")
    assert not carried(request, word)

    # The next relaunch resumes the fallback's session; the dead one is never asked again.
    seat.reboot_and_up()
    poll(lambda: (seat.session_record() or {}).get("start") == "resumed", "the fallback's session resumed", 240,
         seat.screen)
    poll(lambda: seat.record("driver-diagnostic") is None, "the superseded loss cleared", 60, seat.screen)
    seat.assert_resumed_past(fresh, dead)
    assert f"session {dead}" not in seat.screen()
