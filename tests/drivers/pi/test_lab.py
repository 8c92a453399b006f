"""Lab tier: the real pi (0.73.1) and omp (18.2.3) TUIs run by `st2 up` as `pi { … }` / `omp { … }`
seats with `ding` — the PTY task is `st2 driver pi-session` / `omp-session`, which injects st2's
channel extension — against the loopback fake model. The extension's frames reach the seat's
records over the inherited pipe, `st2 agents` reads them back (context, `obs:` following turns,
one compaction per `/compact`), and DING still delivers one notice exactly once."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest
from support import poll_for
from support_channel import REPO

LAB_DIR = REPO / "tests" / "lab"
DING_DIR = REPO / "tests" / "ding"
for directory in (LAB_DIR, DING_DIR):
    if str(directory) not in sys.path:
        sys.path.append(str(directory))

from ding_support import write_message  # noqa: E402
from fake_model import FakeModel  # noqa: E402
from harnesses import environment_path  # noqa: E402
from lab_config import Lab, configure_pi  # noqa: E402
from lab_support import require_harness  # noqa: E402
from st2_seat import UpSeat, fake_model  # noqa: E402,F401 (fake_model: the fixture)

from st2.ding.notice import notice_text  # noqa: E402

pytestmark = [pytest.mark.lab, pytest.mark.process]

HOST = "labhost"
WAIT = 120.0
# The lab's fake usage per answer: input 9900, output 42, cacheRead 1200, cacheWrite 300.
EXPECTED = {
    # harness: (numerator, percent) — pi's totalTokens, omp's prompt-only figure
    "pi": (11442, 5.721),
    "omp": (11400, 5.7),
}


def user_texts(entry: dict) -> list[str]:
    texts = []
    for message in (entry.get("body") or {}).get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        texts += [content] if isinstance(content, str) else [part.get("text", "") for part in content
                                                             if isinstance(part, dict)]
    return texts


class Seat(UpSeat):
    scrollback = 0

    def __init__(self, harness: str, catalog: Path, state_home: Path, env: dict[str, str]) -> None:
        super().__init__(catalog, state_home, env, HOST, "worker")
        self.harness = harness

    def human_row(self) -> str:
        return next(line for line in self.st2("agents", "--host", HOST).stdout.splitlines() if "worker" in line)

    def state(self) -> str | None:
        value = self.record("harness-state")
        return value and value["state"]

    def context(self, key: str):
        return (self.record("harness-context") or {}).get(key)


@pytest.fixture(params=["pi", "omp"])
def seat(request, tmp_path: Path, fake_model: FakeModel):
    name = request.param
    harness = require_harness(name)
    lab = Lab.create(tmp_path / "lab")
    env = configure_pi(lab, harness, fake_model)
    arguments = '        args "--offline"\n' if name == "pi" else ""
    if name == "omp":
        from capture_omp_screens import OMP_OFFLINE_SETTINGS

        config = lab.home / ".omp" / "agent" / "config.yml"
        # omp asks before an exec-tier tool runs: the approval is an extension event (blocked on a human).
        config.write_text(config.read_text() + OMP_OFFLINE_SETTINGS + "tools:\n  approvalMode: always-ask\n")
        env["OMP_SKIP_SETUP"] = "1"
    state_home = Path(tempfile.mkdtemp(prefix="st2pi-"))  # short: tmux sockets live under it
    catalog = tmp_path / "catalog"
    directory = catalog / "agents" / HOST / "worker"
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "agent.kdl").write_text(
        f'agent "worker" {{\n    workspace "{lab.workspace}"\n    ding\n'
        f'    {name} {{\n        executable "{harness.executable}"\n        provider "fake-anthropic"\n'
        f'        model "fake-claude"\n{arguments}    }}\n}}\n')
    env = env | {"XDG_STATE_HOME": str(state_home),
                 "PATH": f"{Path(sys.executable).parent}:{environment_path(harness)}"}
    running = Seat(name, catalog, state_home, env)
    try:
        yield running
    finally:
        running.st2("down", "--host", HOST, "worker")
        running.kill_pty()
        shutil.rmtree(state_home, ignore_errors=True)


def harness_pid(wrapper_pid: int) -> int:
    children = Path(f"/proc/{wrapper_pid}/task/{wrapper_pid}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_a_pi_family_seat_under_st2_up_is_observed_natively_and_still_delivered_by_ding(seat: Seat,
                                                                                        fake_model: FakeModel) -> None:
    numerator, percent = EXPECTED[seat.harness]
    seat.up()

    # session_start through the channel: idle, and the window (pi reads 0 before any reply;
    # omp's answer there is an estimate, withheld).
    poll_for(lambda: seat.state() == "idle", "session_start -> idle", WAIT)
    poll_for(lambda: seat.context("windowTokens") == 200000, "the first reading", WAIT)
    assert seat.context("usedTokens") == (0 if seat.harness == "pi" else None)
    poll_for(lambda: "fake-claude" in seat.screen(), "the idle composer", WAIT)

    # A turn with a tool call: obs follows it (active while the tool runs, then idle).
    seat.type("FAKE_TOOL: sleep 8")  # long enough for `st2 agents` to see it under load
    if seat.harness == "omp":  # the approval prompt: blocked on a human, asked for permission
        poll_for(lambda: (seat.record("harness-state") or {}).get("blockedOn") == "human", "the approval", 60)
        observed = seat.row()["observedState"]
        assert (observed["state"], observed["blockedOn"], observed["ask"]) == ("active", "human", "permission")
        poll_for(lambda: "Approve" in seat.screen(), "omp's approval prompt", 30)
        seat.tmux("send-keys", "-t", seat.session, "Enter")  # ❯ Approve
    poll_for(lambda: seat.state() == "active" and seat.record("harness-state")["blockedOn"] == "none",
             "agent_start -> active", 60)
    assert "obs:active" in seat.human_row()
    poll_for(lambda: seat.state() == "idle" and seat.context("usedTokens") == numerator,
             "agent_end -> idle with the turn's reading", 90)
    assert "obs:idle" in seat.human_row()
    context = seat.row()["context"]
    assert (context["harness"], context["usedTokens"], context["windowTokens"], context["usedPercent"],
            context["model"], context["compactions"], context["stale"]) == (
        seat.harness, numerator, 200000, percent, "fake-claude", 0, False)
    from st2.bus.guide import guide_text

    # omp 18.2.3 trims the trailing newline of an appended prompt: the text itself must be there.
    assert fake_model.carries(guide_text().strip())  # the bus guide, appended to the system prompt

    # DING is still the delivery: one notice, typed into the real TUI, reaches the model once.
    before = len(fake_model.model_requests())
    name = write_message(seat.directory, "review the parser", sender=f"{HOST}.planner")
    notice = notice_text(name, "review the parser", f"{HOST}.planner")
    try:
        poll_for(lambda: any(notice in text for entry in fake_model.model_requests()[before:]
                             for text in user_texts(entry)), "the notice at the fake model", 120)
    except AssertionError:
        log = "".join(path.read_text()[-2000:] for path in seat.catalog.rglob("*.ding.log"))
        raise AssertionError(f"the notice never reached the model; DING's log:\n{log}\n{seat.screen()}") from None
    poll_for(lambda: seat.state() == "idle" and len(fake_model.model_requests()) > before,
             "the notice's turn settled", 90)
    prompts = [text for entry in fake_model.model_requests()[before:] for text in user_texts(entry) if notice in text]
    assert prompts and all(text.count(notice) == 1 for text in prompts)
    # The conversation the model last saw holds the notice as one user turn: delivered exactly once.
    assert sum(notice in text for text in user_texts(fake_model.model_requests()[-1])) == 1

    # /compact: one compaction, the harness's own count; the emptied reading withheld with it.
    seat.type("/compact")
    poll_for(lambda: seat.context("compactions") == 1, "the compaction edge", 120)
    context = seat.row()["context"]
    assert (context["compactions"], context["lastCompactionTrigger"], context["usedTokens"],
            context["windowTokens"]) == (1, "unknown", None, 200000)

    # The next turn after the compaction: the reading returns, the count stays one.
    seat.type("hi again")
    poll_for(lambda: seat.state() == "idle" and seat.context("usedTokens") == numerator,
             "a fresh reading after the compaction", 90)

    row = seat.row()
    assert (row["observedState"]["state"], row["observedState"]["harness"]) == ("idle", seat.harness)
    context = row["context"]
    assert (context["harness"], context["usedTokens"], context["usedPercent"], context["compactions"]) == (
        seat.harness, numerator, percent, 1)

    # The harness killed: the wrapper reaps it and writes ended with its real exit.
    wrapper = int(seat.tmux("display-message", "-p", "-t", seat.session, "#{pane_pid}").strip())
    os.kill(harness_pid(wrapper), signal.SIGKILL)
    poll_for(lambda: seat.state() == "ended", "ended", 30)
    assert seat.record("harness-state")["exit"] == "signal 9"
    log = seat.state_home / "st2" / "channel" / f"{HOST}.worker.log"
    assert not log.exists(), log.read_text()  # the real extension wrote nothing malformed


def omp_errors(log: Path) -> list[tuple[str, int | None]]:
    """``(event, errorId)`` of every failed turn the lab extension logged (tests/lab/extension/
    context-usage.ts): omp's own typed class on the failed message_end and on agent_end's last
    message."""
    if not log.exists():
        return []
    found = []
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if "errorId" in entry:
            found.append((entry["event"], entry["errorId"]))
        if "last" in entry:
            found.append((entry["event"], entry["last"]["errorId"]))
    return found


@pytest.mark.parametrize("seat", ["omp"], indirect=True)
def test_omp_s_typed_401_reads_provider_auth_a_429_does_not_and_an_ordinary_turn_clears_it(
        seat: Seat, fake_model: FakeModel) -> None:
    """omp 18.2.3 types a turn's error as a bit set (``AssistantMessage.errorId``): the fake model's
    401 is the class bit plus AuthFailed alone (0x01001000), its 429 the class bit plus Transient
    (0x21000). The extension forwards only the class's word; the wrapper publishes providerAuth
    through the gate's publisher (producerVersion 18.2.3) and clears it on an ordinary turn."""
    config = Path(seat.env["HOME"]) / ".omp" / "agent" / "config.yml"
    config.write_text(config.read_text() + "retry:\n  enabled: false\n")  # a 429 is otherwise retried ten times
    # The lab extension beside st2's logs the typed class omp hands extensions.
    log = Path(seat.env["ST2_LAB_EXTENSION_LOG"])
    declaration = seat.directory / "agent.kdl"
    declaration.write_text(declaration.read_text().replace(
        '        model "fake-claude"\n', f'        model "fake-claude"\n        args "-e" "{LAB_DIR / "extension" / "context-usage.ts"}"\n'))
    seat.up()
    poll_for(lambda: seat.state() == "idle" and "fake-claude" in seat.screen(), "omp idle", WAIT)

    def answered(status: int) -> bool:
        return any((entry.get("answer") or {}).get("status") == status for entry in fake_model.model_requests())

    seat.type("FAKE_HTTP_STATUS: 429")
    poll_for(lambda: answered(429) and seat.state() == "idle" and len(omp_errors(log)) == 2, "the 429's failed turn", 90)
    assert omp_errors(log) == [("message_end", 0x1000 | 0x0002_0000), ("agent_end", 0x1000 | 0x0002_0000)]
    assert seat.record("driver-diagnostic") is None

    seat.type("FAKE_HTTP_STATUS: 401")
    # st2's extension is loaded first (``-e`` before the declared args), so its agent_end frame
    # can publish the record before omp runs the lab extension's agent_end: wait for both.
    poll_for(lambda: seat.record("driver-diagnostic") and len(omp_errors(log)) == 4, "providerAuth from the 401", 90)
    assert omp_errors(log)[2:] == [("message_end", 0x1000 | 0x0100_0000), ("agent_end", 0x1000 | 0x0100_0000)]
    diagnostic = seat.row()["driverDiagnostic"]
    assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
            diagnostic["source"], diagnostic["producerVersion"], diagnostic["support"]) == (
        "failure", "omp", "providerAuth", "providerAuthRejected", "turnResult", "18.2.3", "supported")
    advised = seat.st2("doctor", "--host", HOST).stdout.splitlines()
    assert any(line.startswith(f"advisory: {HOST}.worker: driver-diagnostic: omp driver failed at stage providerAuth: "
                               "providerAuthRejected (source turnResult") for line in advised), advised

    seat.type("hello again")
    poll_for(lambda: seat.record("driver-diagnostic") is None, "recovery on an ordinary turn end", 90)
    channel_log = seat.state_home / "st2" / "channel" / f"{HOST}.worker.log"
    assert not channel_log.exists(), channel_log.read_text()  # every turn frame the real extension sent decoded
