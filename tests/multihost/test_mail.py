"""Cross-host mail over real Syncthing: `st2 message send` on host a to a seat on host b lands in
b's inbox by replication, b's DING types its notice into the seat's real tmux pane exactly once,
and what b does with it (the archive receipt, a reply) replicates back to a; an old inbox copy
restored after the archive is never noticed again (issue 21 item 3)."""

from __future__ import annotations

import os
import subprocess

import pytest

from multihost_support import poll_for, two_hosts
from st2.ding.notice import notice_text, shell_comment

pytestmark = pytest.mark.multihost

DING_SHELL = '    argv "sh"\n    env { PS1 ""; HISTFILE "/dev/null"; }\n    ding'


def pane(fleet, runtime_id: str) -> str:
    """The whole scrollback of the seat's tmux pane, wrapped lines joined."""
    record = fleet.record(runtime_id)
    return subprocess.run(["tmux", "-S", record.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", "st2"],
                          capture_output=True, text=True, timeout=10).stdout


def send(fleet, recipient: str, subject: str) -> str:
    result = fleet.st2("message", "send", recipient, "--as", "a.operator", "-m", f"body of {subject}",
                       "--subject", subject, "--json")
    assert result.returncode == 0, result.stderr
    import json

    return json.loads(result.stdout)["filename"]


@pytest.mark.parametrize("with_declarations", [True, False], ids=["engine-carries-declarations", "declared-per-host"])
def test_a_mail_from_a_reaches_bs_seat_once_and_its_receipt_and_reply_reach_a(with_declarations):
    with two_hosts(with_declarations) as hosts:
        hosts.principal("operator", host="a")
        hosts.declare("worker", DING_SHELL, host="b")
        hosts.sync.settle()
        hosts.b.up("--interval", "60s")
        ownership = hosts.b.scope.directory / "ding" / "b.worker.json"
        poll_for(lambda: {"b.worker", "b.worker.ding"} <= set(hosts.b.running()) and ownership.exists(),
                 lambda: f"b's seat and its notifier: {hosts.b.log()}", timeout=60)

        first = send(hosts.a, "b.worker", "first")
        notice = shell_comment(notice_text(first, "first", "a.operator"))
        poll_for(lambda: notice in pane(hosts.b, "b.worker"),
                 lambda: f"the notice in b's pane: {pane(hosts.b, 'b.worker')[-2000:]}", timeout=60)

        archived = hosts.b.st2("message", "archive", first, "--as", "b.worker")
        assert archived.returncode == 0, archived.stderr
        replied = hosts.b.st2("message", "reply", first, "--as", "b.worker", "-m", "done")
        assert replied.returncode == 0, replied.stderr
        on_a = hosts.a.catalog / "agents" / "b" / "worker" / "resources"
        poll_for(lambda: (on_a / "archive" / first).exists() and not (on_a / "inbox" / first).exists(),
                 "the archive receipt to reach a", timeout=60)
        reply_box = hosts.a.catalog / "principals" / "a" / "operator" / "resources" / "inbox"
        poll_for(lambda: reply_box.exists() and any(reply_box.iterdir()), "b's reply to reach a", timeout=60)
        thread = hosts.a.st2("message", "thread", first)
        assert thread.returncode == 0, thread.stderr
        lines = thread.stdout.splitlines()
        assert len(lines) == 2, thread.stdout
        assert lines[0].startswith(f"{first}  from a.operator  first"), thread.stdout
        assert "from b.worker  re: first" in lines[1], thread.stdout

        # An old copy of the inbox restored on a (a backup, a stale replica) is carried back to b
        # after the archive: the receipt settles it, so it is never noticed again.
        restored = hosts.a.base / f".{first}.restored"
        restored.write_bytes((on_a / "archive" / first).read_bytes())
        before = max(event["id"] for event in hosts.sync.b.audit_events())
        os.replace(restored, on_a / "inbox" / first)
        on_b = hosts.b.catalog / "agents" / "b" / "worker" / "resources"
        poll_for(lambda: any(event["id"] > before and event["type"] == "ItemFinished" and event["data"]["action"] == "update"
                             and event["data"]["item"] == f"agents/b/worker/resources/inbox/{first}"
                             for event in hosts.sync.b.audit_events()),
                 "b's Syncthing to write the restored inbox copy", timeout=60)
        # A later message is noticed after the first (the notifier goes in filename order): by
        # then any second notice of the first, or of its restored copy, would have been typed.
        second = send(hosts.a, "b.worker", "second")
        later = shell_comment(notice_text(second, "second", "a.operator"))
        poll_for(lambda: later in pane(hosts.b, "b.worker"), "the second notice in b's pane", timeout=60)
        screen = pane(hosts.b, "b.worker")
        assert screen.count(notice) == 1 and screen.count(later) == 1, screen
        assert (on_b / "archive" / first).exists()


MESSAGES = 200
SEATS = [f"d{index}" for index in range(4)]


def test_200_messages_from_a_to_4_seats_on_b_arrive_once_each_through_two_supervisor_kills():
    """Every one of 200 messages sent on a is noticed on b exactly once (one submit, one paste in
    the stand-in TUI's raw input, no generic backlog notice), while b's `st2 up` is SIGKILLed
    twice midway (the second time one notifier dies too while nobody supervises). Send order is
    not asserted: Syncthing pulls a batch of files in its own order, and st2 promises no order
    across hosts (it stays correct on whatever order the engine delivers)."""
    import signal
    import sys

    from fault_mail import HERE as FAULTS, kill_notifier, read_send_logs, standin_files, standin_seat, submitted, tally
    from support import REPO

    with two_hosts(with_declarations=False) as hosts:
        hosts.principal("sender", host="a")
        files = {identity: standin_files(hosts.base, identity) for identity in SEATS}
        for identity in SEATS:
            hosts.declare(identity, standin_seat(*files[identity]), host="b")
        ownership = [hosts.b.scope.directory / "ding" / f"b.{identity}.json" for identity in SEATS]
        hosts.b.up("--interval", "60s")
        poll_for(lambda: len(hosts.b.running()) == 2 * len(SEATS) and all(path.exists() for path in ownership),
                 lambda: f"b's four DING seats: {hosts.b.log()}", timeout=90, step=0.1)

        def delivered() -> int:
            return sum(submitted(events) for _, events in files.values())

        log = hosts.base / "sender.log"
        sender = subprocess.Popen(
            [sys.executable, str(FAULTS / "mail_sender.py"), str(hosts.a.catalog), "a.sender", str(log),
             str(MESSAGES), *(f"b.{identity}" for identity in SEATS)],
            cwd=REPO, env=hosts.a.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for kill, threshold in enumerate((MESSAGES // 4, MESSAGES // 2)):
                poll_for(lambda: delivered() >= threshold, lambda: f"{threshold} deliveries (at {delivered()})",
                         timeout=120, step=0.02)
                supervisor = hosts.b.supervisors[-1]
                supervisor.send_signal(signal.SIGKILL)
                supervisor.wait(timeout=30)
                assert delivered() < MESSAGES, "the kill came after every message was delivered"
                if kill == 1:
                    assert kill_notifier(hosts.b, SEATS[kill]) == 1
                hosts.b.up("--interval", "60s")
                poll_for(lambda: "adopted" in hosts.b.log(), lambda: f"the new supervisor to adopt: {hosts.b.log()}",
                         timeout=60, step=0.05)
            assert sender.wait(timeout=120) == 0, sender.stderr.read().decode()
            previous = -1
            while delivered() < MESSAGES and delivered() != previous:     # bounded by progress
                previous = delivered()
                poll_for(lambda: delivered() > previous or delivered() >= MESSAGES, timeout=60, step=0.05)
        finally:
            if sender.poll() is None:
                sender.kill()
                sender.wait()
        evidence: list[str] = []
        sent = read_send_logs([log], SEATS)
        counts = dict(zip(("lost", "double", "backlog", "fifo", "foreign"), tally(files, sent, evidence)))
        assert sum(len(rows) for rows in sent.values()) == MESSAGES
        del counts["fifo"]
        assert counts == {"lost": 0, "double": 0, "backlog": 0, "foreign": 0}, [
            line for line in evidence if "out of send order" not in line][:20]
