"""Lab tier: the real Claude Code TUI (the pinned 2.1.197) run by `st2 up` as a `claude { … }`
seat — its PTY task is `st2 driver claude-session`, its `.claude/settings.local.json` is the one
st2 renders — against the loopback fake model. Real hooks fire into the catalog, the real
status-line tee writes harness-context, and `st2 agents --json` reads them back. A permission
dialog is answered from `st2 web`'s seat page in a real Chromium through st2's waiting
PermissionRequest hook (stale answers refused, nothing applied); a human answering at the pane
first wins, the hook then ends and the page's answer to that ask is refused."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from support import poll_for
from support_claude import REPO

LAB_DIR = REPO / "tests" / "lab"
if str(LAB_DIR) not in sys.path:
    sys.path.append(str(LAB_DIR))

from fake_model import FakeModel  # noqa: E402
from lab_config import Lab, configure_claude  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model  # noqa: E402,F401 (fake_model: the fixture)
from web_browser import browser_page  # noqa: E402
from web_support import WebServer  # noqa: E402

pytestmark = pytest.mark.lab

HOST = "labhost"
WAIT = 90.0


class Seat(UpSeat):
    scrollback = 0

    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str]) -> None:
        super().__init__(catalog, state_home, env, HOST, "worker")

    def state(self):
        value = self.record("harness-state")
        return value and (value["state"], value["blockedOn"], value["ask"], value["transitions"])


@pytest.fixture
def seat(tmp_path: Path, fake_model: FakeModel):
    harness = require_harness("claude-code")
    lab = Lab.create(tmp_path / "lab")
    env = configure_claude(lab, harness, fake_model, hooks=False)
    (lab.workspace / ".claude" / "settings.local.json").unlink()  # st2 renders this file
    state_home = Path(tempfile.mkdtemp(prefix="st2cl-"))  # short: tmux sockets live under it
    catalog = tmp_path / "catalog"
    directory = catalog / "agents" / HOST / "worker"
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(
        f'agent "worker" {{\n    workspace "{lab.workspace}"\n'
        f'    claude {{\n        executable "{harness.executable}"\n        model "claude-sonnet-4-5"\n    }}\n}}\n')
    # The operator's renderer: it keeps every payload Claude sends (verbatim captures) and draws a
    # line the test looks for on the real screen — slot chaining through the real harness.
    renderer = f"cat >> '{lab.logs}/statusline-stdin.jsonl'; echo >> '{lab.logs}/statusline-stdin.jsonl'; printf 'st2-lab-renderer ok'"
    env = env | {"XDG_STATE_HOME": str(state_home), "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
                 "ST_CLAUDE_STATUSLINE_RENDERER": renderer}
    running = Seat(catalog, state_home, env)
    running.workspace = lab.workspace
    running.logs = lab.logs
    try:
        yield running
    finally:
        running.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)


def claude_pid(wrapper_pid: int) -> int:
    children = Path(f"/proc/{wrapper_pid}/task/{wrapper_pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_a_claude_seat_under_st2_up_is_fully_observed(seat: Seat, fake_model: FakeModel) -> None:
    seat.up()
    rendered = json.loads((seat.workspace / ".claude" / "settings.local.json").read_text())
    assert rendered["statusLine"]["command"] == '"$ST_HOOKS/claude-statusline.sh"'

    # SessionStart fired into the catalog: idle; the first status line carries the window only.
    poll_for(lambda: seat.state() and seat.state()[0] == "idle", lambda: "SessionStart -> idle\n" + seat.screen(), timeout=WAIT, step=0.25)
    context = poll_for(lambda: seat.record("harness-context"), lambda: "the first status-line reading\n" + seat.screen(), timeout=WAIT, step=0.25)
    assert (context["usedTokens"], context["windowTokens"], context["usedPercent"]) == (None, 200000, None)
    poll_for(lambda: "st2-lab-renderer ok" in seat.screen(), lambda: "the operator renderer's line on screen\n" + seat.screen(), timeout=30, step=0.25)

    # One turn: 99000 + 300 + 1200 = 100500 of 200000 — Claude displays 50, not 50.25.
    fake_model.set_usage(input=99000, cache_creation=300, cache_read=1200, output=42)
    seat.type("hi")
    poll_for(lambda: (seat.record("harness-context") or {}).get("usedTokens") == 100500, lambda: "the turn's reading\n" + seat.screen(), timeout=WAIT, step=0.25)
    poll_for(lambda: seat.state()[0] == "idle" and seat.state()[3] >= 3, lambda: "UserPromptSubmit -> Stop\n" + seat.screen(), timeout=WAIT, step=0.25)
    row = seat.row()
    assert (row["observedState"]["state"], row["observedState"]["harness"]) == ("idle", "claude")
    from st2.bus.guide import guide_text

    assert fake_model.carries(guide_text())  # the bus guide, appended to Claude's system prompt
    context = row["context"]
    assert (context["harness"], context["usedTokens"], context["windowTokens"], context["usedPercent"],
            context["model"], context["stale"]) == ("claude", 100500, 200000, 50.0, "claude-sonnet-4-5", False)

    # A permission prompt: blocked on a human, asked for permission.
    target = seat.workspace / "made-by-tool.txt"
    seat.type(f"FAKE_TOOL: touch {target}")
    poll_for(lambda: seat.state()[1] == "human", lambda: "PermissionRequest -> blocked\n" + seat.screen(), timeout=WAIT, step=0.25)
    row = seat.row()
    assert (row["observedState"]["state"], row["observedState"]["blockedOn"], row["observedState"]["ask"]) == (
        "active", "human", "permission")
    seat.tmux("send-keys", "-t", seat.session, "Enter")  # "Yes"
    poll_for(lambda: target.exists() and seat.state()[:2] == ("idle", "none"), lambda: "the granted call and Stop\n" + seat.screen(), timeout=WAIT, step=0.25)

    # /compact: counted once, trigger manual.
    seat.type("/compact")
    poll_for(lambda: (seat.record("harness-context") or {}).get("compactions") == 1, lambda: "the compaction\n" + seat.screen(), timeout=WAIT, step=0.25)
    poll_for(lambda: seat.state()[0] == "idle", lambda: "idle after /compact\n" + seat.screen(), timeout=WAIT, step=0.25)
    context = seat.row()["context"]
    assert (context["compactions"], context["lastCompactionTrigger"]) == (1, "manual")

    # Killing claude: the wrapper reaps it and writes ended with its real exit.
    wrapper = int(seat.tmux("display-message", "-p", "-t", seat.session, "#{pane_pid}").strip())
    os.kill(claude_pid(wrapper), signal.SIGKILL)
    poll_for(lambda: seat.state()[0] == "ended", lambda: "ended\n" + seat.screen(), timeout=30, step=0.25)
    observed = seat.row()["observedState"]
    assert (observed["state"], observed["exit"]) == ("ended", "signal 9")
    # Every payload the renderer received was the tee's own stdin, verbatim and whole.
    payloads = [json.loads(line) for line in (seat.logs / "statusline-stdin.jsonl").read_text().splitlines() if line]
    assert payloads and {payload["version"] for payload in payloads} == {"2.1.197"}


def test_a_401_reads_provider_auth_from_stop_failure_and_a_429_does_not(seat: Seat, fake_model: FakeModel) -> None:
    """The typed class Claude's StopFailure carries: a 401 from the model is `authentication_failed`
    (providerAuth), a 429 is `rate_limit` (nothing); a turn's ordinary end clears providerAuth."""
    seat.env["CLAUDE_CODE_MAX_RETRIES"] = "0"  # a 429 is otherwise retried ten times first
    seat.up()
    poll_for(lambda: seat.state() and seat.state()[0] == "idle", lambda: "SessionStart -> idle\n" + seat.screen(),
             timeout=WAIT, step=0.25)

    def reason() -> str | None:
        return (seat.record("harness-state") or {}).get("reason")

    seat.type("FAKE_HTTP_STATUS: 429")
    poll_for(lambda: (reason() or "").startswith("stopFailure"), lambda: "the 429's StopFailure\n" + seat.screen(),
             timeout=WAIT, step=0.25)
    assert reason() == "stopFailure rate_limit"
    assert seat.record("driver-diagnostic") is None
    # A failed turn's prompt stays in the conversation and Claude joins the next prompt to it, so
    # each marker goes to a fresh conversation (the fake answers the first marker it finds).
    seat.type("/clear")
    poll_for(lambda: reason() == "sessionStart", lambda: "/clear\n" + seat.screen(), timeout=WAIT, step=0.25)
    seat.type("FAKE_HTTP_STATUS: 401")
    poll_for(lambda: seat.record("driver-diagnostic"), lambda: "providerAuth\n" + seat.screen(), timeout=WAIT, step=0.25)
    assert reason() == "stopFailure authentication_failed"
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"]) == ("failure", "claude", "providerAuth", "providerAuthRejected", "turnResult")
    seat.type("/clear")
    poll_for(lambda: reason() == "sessionStart", lambda: "/clear\n" + seat.screen(), timeout=WAIT, step=0.25)
    assert seat.record("driver-diagnostic")["stage"] == "providerAuth"  # a new session is no ordinary end
    seat.type("hello again")
    poll_for(lambda: seat.record("driver-diagnostic") is None, lambda: "recovery on an ordinary turn end\n" + seat.screen(),
             timeout=WAIT, step=0.25)


SEAT = f"{HOST}.worker"


def ask_files(seat) -> list:
    return sorted(path.name for path in seat.state_home.glob("**/asks/*.json"))


def test_a_claude_permission_is_answered_from_the_page_and_the_pane_still_wins(seat, fake_model) -> None:
    seat.up()
    poll_for(lambda: seat.state() and seat.state()[0] == "idle", lambda: seat.screen(), timeout=WAIT, step=0.25)
    server = WebServer(seat.catalog, HOST, seat.env)
    try:
        with browser_page(server) as page:
            def post(**fields) -> str:
                """Answer with the browser's session and a fresh token; the outcome shown."""
                page.goto(f"{server.url}/seat/{SEAT}")
                token = page.locator("#message input[name=csrf]").get_attribute("value")
                answer = page.request.post(f"{server.url}/seat/{SEAT}/answer",
                                           form={"csrf": token, "verb": "approve", "channel": "claude", **fields})
                shown = re.search(r'<p id="outcome">([^<]*)</p>', answer.text())
                return html.unescape(shown.group(1)) if shown else answer.text()

            def open_ask(target) -> tuple[str, str]:
                seat.type(f"FAKE_TOOL: touch {target}")
                poll_for(lambda: seat.state()[1] == "human", lambda: "blocked\n" + seat.screen(), timeout=WAIT,
                         step=0.25)
                page.goto(f"{server.url}/seat/{SEAT}")

                # The server may render the page before its watch saw the seat blocked or the
                # hook's ask: the page then fetches what the seat is blocked on by itself.
                page.wait_for_selector("#blocked-on form.ask")
                form = page.locator("#blocked-on form.ask")
                assert str(target) in form.locator("p").inner_text()
                return (form.locator("input[name=digest]").get_attribute("value"),
                        form.locator("input[name=incarnation]").get_attribute("value"))

            # Answered from the page; stale answers first, each refused with nothing applied.
            target = seat.workspace / "allowed-from-the-page.txt"
            digest, incarnation = open_ask(target)
            changed = ("0" if digest[0] != "0" else "1") + digest[1:]
            assert post(digest=changed, incarnation=incarnation).startswith("refused: that ask is no longer pending")
            assert post(digest=digest, incarnation="another").startswith("refused: the seat's harness was restarted")
            assert seat.state()[1] == "human" and not target.exists()
            page.goto(f"{server.url}/seat/{SEAT}")
            page.wait_for_selector("#blocked-on form.ask")
            with page.expect_navigation():
                page.locator("#blocked-on form.ask button[value=approve]").click()
            assert page.locator("#outcome").inner_text() == "approved"
            poll_for(lambda: target.exists() and seat.state()[:2] == ("idle", "none"),
                     lambda: "allowed and idle\n" + seat.screen(), timeout=WAIT, step=0.25)
            assert "Allowed by PermissionRequest hook" in seat.screen()
            assert post(digest=digest, incarnation=incarnation).startswith("refused: that ask is no longer pending")

            # The human at the pane first: the hook ends, and the page's answer is refused.
            target = seat.workspace / "allowed-at-the-pane.txt"
            digest, incarnation = open_ask(target)
            seat.tmux("send-keys", "-t", seat.session, "Enter")   # "Yes"
            poll_for(lambda: target.exists() and seat.state()[:2] == ("idle", "none"),
                     lambda: "allowed at the pane\n" + seat.screen(), timeout=WAIT, step=0.25)
            poll_for(lambda: ask_files(seat) == [], lambda: f"the hook ended: {ask_files(seat)}", timeout=10)
            assert post(digest=digest, incarnation=incarnation).startswith("refused: that ask is no longer pending")
    finally:
        server.stop()
