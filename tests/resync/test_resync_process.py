"""Resync with real processes: a reconcile pass completes while a publication is blocked on a held
stream lock, and under a real ``st2 up`` a ``file:`` edit reaches a subscribing seat's inbox once,
DING typing it as stream work."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest

from supervisor_support import poll_for, temporary_fleet
from st2.base.clock import FakeClock
from st2.bus.addressing import resolve_seat
from st2.bus.mailbox import archive_of, list_box, list_inbox
from st2.bus.stream import ring_path
from st2.catalog.location import CatalogLocation
from st2.ding.notice import message_notice, shell_comment
from st2.fs.lock import record_lock
from st2.resources import state as resource_state
from st2.resync.machine import Phase
from st2.resync.publisher import Key, ResyncPublisher, entries_from_plans
from st2.supervisor import lowering
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.reconcile import Reconciler

pytestmark = pytest.mark.process

STANDIN = Path(__file__).resolve().parents[1] / "ding" / "standin_tui.py"  # the line-grammar stand-in TUI
WORK = '    exec "work" { argv "sleep" "600" }'
KEY = Key("h.sub", "h.owner", "doc", "changes")


def advance(owner: Path, text: str) -> None:
    facts = {"content": text}
    now = int(time.time() * 1000)

    def change(current):
        revision = 1 if current is None else current.revision + 1
        return resource_state.State("h.owner", "doc", "file:///srv/now.md", 1, revision,
                                    resource_state.digest_facts(facts), now, facts, None, now)

    resource_state.update(owner, "h.owner", "doc", change, now)


def test_reconcile_pass_completes_while_a_resync_publication_is_blocked(monkeypatch) -> None:
    with temporary_fleet("st2rs-") as fleet:
        monkeypatch.setenv("ST2_TRANSPORT", "setsid")
        monkeypatch.setenv("XDG_STATE_HOME", str(fleet.state))
        monkeypatch.setattr(lowering, "st2_command", lambda: ["sh", "-c", "exec sleep 600"])
        owner = fleet.seat("owner", WORK)
        subscriber = fleet.seat("sub", WORK + '\n    stream "changes"\n    subscribe "doc" stream="changes" agent="h.owner"')
        location = CatalogLocation(fleet.catalog, "h")
        reconciler = Reconciler(location, clock=FakeClock(), scope=fleet.scope, output=io.StringIO(),
                                notify=lambda notice: None)
        view = read_catalog(location)
        reconciler.run_pass(view)
        publisher = ResyncPublisher(fleet.catalog, "h", poll_seconds=0.2).start()
        try:
            ring = ring_path(fleet.catalog, resolve_seat(fleet.catalog, "h.sub"), "changes")
            ring.parent.mkdir(parents=True, exist_ok=True)
            with record_lock(ring):  # the stream lock every publication to the subscriber takes
                advance(owner, "v1")
                publisher.refresh(entries_from_plans(view.plans))
                poll_for(lambda: publisher.slot(KEY).phase is Phase.OUTSTANDING, "the publication to start", timeout=10)
                fleet.seat("third", WORK)
                started = time.monotonic()
                view = read_catalog(location)
                report = reconciler.run_pass(view)
                publisher.refresh(entries_from_plans(view.plans))
                elapsed = time.monotonic() - started
                assert [item.split("[")[0] for item in report.launched] == ["h.third.work"]
                assert elapsed < 5, elapsed  # far inside the lock's 10 s timeout
                assert publisher.slot(KEY).phase is Phase.OUTSTANDING and list_inbox(subscriber) == []
            # The worker counts a publication after emit returns, which is after the message's
            # rename into the inbox: wait for the count, then the inbox holds it once.
            poll_for(lambda: publisher.published == 1, "the publication once the lock is free", timeout=30)
            assert len(list_inbox(subscriber)) == 1
        finally:
            publisher.stop()


def test_a_file_edit_reaches_a_subscribing_seat_once_named_as_stream_work(tmp_path: Path) -> None:
    with temporary_fleet("st2rf-") as fleet:
        document = fleet.base / "now.md"
        document.write_text("first\n")
        fleet.seat("owner", f'    argv "sleep" "600"\n    resource "doc" uri="file://{document}"')
        logs = fleet.base / "standin"
        logs.mkdir()
        argv = " ".join(f'"{word}"' for word in (sys.executable, str(STANDIN), "--bytes", str(logs / "bytes"),
                                                 "--events", str(logs / "events")))
        subscriber = fleet.seat("sub", f'    argv {argv}\n    ding\n    stream "changes"\n'
                                       '    subscribe "doc" stream="changes" agent="h.owner"')
        (subscriber / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
        supervisor = fleet.up("--interval", "2s")
        try:
            def delivered() -> list:
                return list_inbox(subscriber) + list_box(archive_of(subscriber))

            poll_for(lambda: len(delivered()) == 1, lambda: f"the first state: {fleet.log()}", timeout=60)
            document.write_text("second\n")
            poll_for(lambda: len(delivered()) == 2, lambda: f"the edit: {fleet.log()}", timeout=30)
            messages = sorted(delivered(), key=lambda message: message.ts)
            assert [message.subject for message in messages] == ["doc of h.owner is at revision 1",
                                                                 "doc of h.owner is at revision 2"]
            latest = messages[-1]
            notice = shell_comment(message_notice(latest.filename, latest.subject, latest.sender, latest.tags))
            assert notice.startswith("# [DING] st2-stream work on stream changes: [id:")
            # The stand-in logs a paste and, at the Return, a submit: the notice is delivered once
            # when it was pasted once and submitted once.
            events = logs / "events"
            pasted, submitted = f"paste\t{notice!r}", f"submit\t{notice!r}"
            poll_for(lambda: events.exists() and submitted in events.read_text().splitlines(), "DING's notice submitted",
                     timeout=60)
            lines = events.read_text().splitlines()
            assert (lines.count(pasted), lines.count(submitted)) == (1, 1), lines
        finally:
            fleet.stop(supervisor)
            fleet.st2("down")
