"""A native delivery pump on host b over mail carried from host a (issue 21 item 3): the pump's
batch selection (st2/delivery/batch.py, shared by the Codex and opencode pumps) delivers each
carried message once, and an old inbox copy an engine restores after b archived the message is
never offered again, even after the ledger pruned its entry."""

from __future__ import annotations

from pathlib import Path

from replication_engine import Engine
from st2.bus.envelope import render
from st2.bus.mailbox import archive_message
from st2.delivery.batch import own_next_batch
from st2.delivery.ledger import CODEX, Event, Ledger

INBOX = "agents/b/worker/resources/inbox"


def test_a_restored_inbox_copy_is_never_offered_to_the_pump_again(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    names = ["1788000000001-aaaaaa.md", "1788000000002-bbbbbb.md"]
    for name in names:
        (a / INBOX).mkdir(parents=True, exist_ok=True)
        (a / INBOX / name).write_bytes(render("a.operator", f"subject {name}", None, (), None, "body"))
    seat = b / "agents" / "b" / "worker"
    (seat / "resources" / "archive").mkdir(parents=True)
    engine = Engine()
    engine.remember(a, f"{INBOX}/{names[0]}")
    for name in reversed(names):  # out of order
        engine.copy(a, b, f"{INBOX}/{name}")
    staging = tmp_path / "state" / "staging"
    staging.mkdir(parents=True)
    ledger = Ledger.load(tmp_path / "state" / "ledger.json", staging, CODEX, "b.worker", "b.worker")
    batch = own_next_batch(ledger, seat, "thread-1")
    assert batch is not None and batch.filenames == tuple(names)  # FIFO by name, whatever the arrival order
    for name in names:
        ledger.apply(name, Event.CONSUMED)
        archive_message(seat, name)
    assert own_next_batch(ledger, seat, "thread-1") is None
    assert ledger.get(names[0]) is None  # pruned: the unread set no longer holds it
    engine.restore(b, f"{INBOX}/{names[0]}")
    assert (seat / "resources" / "inbox" / names[0]).exists()
    assert own_next_batch(ledger, seat, "thread-1") is None  # the receipt settles the restored copy
    assert not (seat / "resources" / "inbox" / names[0]).exists()  # and reading cleaned it
