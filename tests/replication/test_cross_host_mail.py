"""Cross-host mail on one machine (issue 21 item 3, docs/delivery.md §Cross-host mail):
host a's `st2 message send` to a seat on host b lands in b's inbox path of a's catalog copy; an
imitated engine carries it to b's copy late, out of order, staged under its temporary name with
its mtime rewritten; b's real DING (under b's real `st2 up`) types each notice into the seat's
tmux pane exactly once; b's archive receipt and reply carried back make `st2 message thread` on a
show the conversation; and an old inbox copy restored after the archive — on either side — is
never noticed again nor counted unread."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from replication_engine import Engine
from st2.ding.notice import notice_text, shell_comment
from supervisor_support import Fleet, poll_for

pytestmark = pytest.mark.process

DING_SHELL = '    argv "sh"\n    env { PS1 ""; HISTFILE "/dev/null"; }\n    ding'
INBOX = "agents/b/worker/resources/inbox"
ARCHIVE = "agents/b/worker/resources/archive"
REPLIES = "principals/a/operator/resources/inbox"


@pytest.fixture
def hosts():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2x-"))
    a, b = Fleet(base / "a", host="a"), Fleet(base / "b", host="b")
    try:
        for fleet in (a, b):  # declarations reach both hosts through the operator's configuration
            fleet.seat("worker", DING_SHELL, host="b")
            principal = fleet.catalog / "principals" / "a" / "operator"
            principal.mkdir(parents=True)
            (principal / "principal.kdl").write_text('principal "operator" host="a"\n')
        yield a, b
    finally:
        a.cleanup()
        b.cleanup()
        shutil.rmtree(base, ignore_errors=True)


def pane(fleet: Fleet) -> str:
    record = fleet.record("b.worker")
    return subprocess.run(["tmux", "-S", record.socket, "capture-pane", "-p", "-J", "-S", "-", "-t", "st2"],
                          capture_output=True, text=True, timeout=10).stdout


def notice(filename: str, subject: str) -> str:
    return shell_comment(notice_text(filename, subject, "a.operator"))


def send(fleet: Fleet, subject: str) -> str:
    result = fleet.st2("message", "send", "b.worker", "--as", "a.operator", "-m", f"body of {subject}",
                       "--subject", subject, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["filename"]


def unread(fleet: Fleet) -> int:
    result = fleet.st2("agents", "--json", "--enrich", "--identity", "b.worker")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)[0]["inbox"]


def noticed(b: Fleet, filename: str, subject: str) -> int:
    return pane(b).count(notice(filename, subject))


# Each engine's own staging name beside the destination (Syncthing, rsync's mkstemp, unison).
STAGING = {"syncthing": ".syncthing.{name}.tmp", "rsync": ".{name}.Xq81Zt", "unison": ".unison.{name}.8d2f.unison.tmp"}


@pytest.mark.parametrize("staging", list(STAGING), ids=list(STAGING))
def test_mail_from_a_is_noticed_on_b_exactly_once_and_its_receipt_and_reply_reach_a(hosts, staging: str) -> None:
    a, b = hosts
    engine = Engine(temporary=STAGING[staging])
    b.up("--interval", "60s")
    ownership = b.scope.directory / "ding" / "b.worker.json"
    poll_for(lambda: {"b.worker", "b.worker.ding"} <= set(b.running()) and ownership.exists(),
             lambda: f"b's seat and its notifier: {b.log()}", timeout=60)

    first, second = send(a, "first"), send(a, "second")
    # Sent on a, the mail sits in b's inbox path of a's copy; nothing reached b yet.
    assert sorted(os.listdir(a.catalog / INBOX)) == sorted([first, second])
    assert not (b.catalog / INBOX / first).exists()
    engine.remember(a.catalog, f"{INBOX}/{first}")  # the stale replica a later restore brings back

    # Late and out of order: the second arrives first, each staged and renamed in, mtimes rewritten.
    engine.copy(a.catalog, b.catalog, f"{INBOX}/{second}")
    poll_for(lambda: noticed(b, second, "second") == 1, lambda: f"the second notice: {pane(b)[-1500:]}", timeout=60)
    engine.copy(a.catalog, b.catalog, f"{INBOX}/{first}")
    poll_for(lambda: noticed(b, first, "first") == 1, lambda: f"the first notice: {pane(b)[-1500:]}", timeout=60)

    # b reads the first and replies to it.
    assert b.st2("message", "archive", first, "--as", "b.worker").returncode == 0
    replied = b.st2("message", "reply", first, "--as", "b.worker", "-m", "done")
    assert replied.returncode == 0, replied.stderr
    reply = replied.stdout.strip()
    # The receipt reaches a before the inbox deletion does: a never counts the settled mail.
    engine.copy(b.catalog, a.catalog, f"{ARCHIVE}/{first}")
    assert unread(a) == 1  # only the second
    engine.delete(a.catalog, f"{INBOX}/{first}")
    engine.copy(b.catalog, a.catalog, f"{REPLIES}/{reply}")
    thread = a.st2("message", "thread", first, "--tree")
    assert thread.returncode == 0, thread.stderr
    assert thread.stdout == (f"{first}  from a.operator  first\n"
                             f"  {reply}  from b.worker  re: first\n"), thread.stdout

    # The stale replica restored into b's inbox after the archive: never noticed again. A third
    # mail carried after it is noticed once, so the notifier has seen the restored copy by then.
    engine.restore(b.catalog, f"{INBOX}/{first}")
    third = send(a, "third")
    engine.copy(a.catalog, b.catalog, f"{INBOX}/{third}")
    poll_for(lambda: noticed(b, third, "third") == 1, lambda: f"the third notice: {pane(b)[-1500:]}", timeout=60)
    assert (noticed(b, first, "first"), noticed(b, second, "second")) == (1, 1)
    assert unread(b) == 2  # the second and the third; the restored copy is settled
    listed = b.st2("message", "ls", "--as", "b.worker")
    assert first not in listed.stdout and not (b.catalog / INBOX / first).exists()  # listing cleaned it
    # The same restore on a's side is hidden there too, and the thread is unchanged.
    engine.restore(a.catalog, f"{INBOX}/{first}")
    assert unread(a) == 2
    assert a.st2("message", "thread", first, "--tree").stdout == thread.stdout
    # b's supervisor restarted (its notifier's backlog is every unread name): nothing is noticed twice.
    for process in b.supervisors:
        b.stop(process)
    b.up("--interval", "60s")
    fourth = send(a, "fourth")
    engine.copy(a.catalog, b.catalog, f"{INBOX}/{fourth}")
    poll_for(lambda: noticed(b, fourth, "fourth") == 1, lambda: f"the fourth notice: {pane(b)[-1500:]}", timeout=60)
    assert [noticed(b, name, subject) for name, subject in ((first, "first"), (second, "second"), (third, "third"))] == [1, 1, 1]
