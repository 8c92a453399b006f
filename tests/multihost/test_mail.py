"""Cross-host mail over real Syncthing: `st2 message send` on host a to a seat on host b lands in
b's inbox by replication, b's DING types its notice into the seat's real tmux pane exactly once,
and what b does with it (the archive receipt, a reply) replicates back to a (issue 21 item 3)."""

from __future__ import annotations

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

        # A later message is noticed after the first (the notifier goes in filename order): by
        # then any second notice of the first would have been typed.
        second = send(hosts.a, "b.worker", "second")
        later = shell_comment(notice_text(second, "second", "a.operator"))
        poll_for(lambda: later in pane(hosts.b, "b.worker"), "the second notice in b's pane", timeout=60)
        screen = pane(hosts.b, "b.worker")
        assert screen.count(notice) == 1 and screen.count(later) == 1, screen
