"""Sending: validation before any write, exclusive publication, idempotent keys, the ledger."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from st2.bus import BusError, sent
from st2.bus.addressing import resolve_seat
from st2.bus.mailbox import archive_message, archive_of, inbox_of, list_inbox, message_names
from st2.bus.publication import publish_exclusive, staging_directory
from st2.fs.atomic import sweep_orphans
from st2.bus.send import send


def test_a_send_lands_one_complete_file_in_the_inbox_and_a_ledger_line(bus_catalog: Path, clock) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    receipt = send(bus_catalog, bob, sender="h1.alice", subject="hi", body="hello", clock=clock)
    assert receipt.filename.startswith(f"{clock.wall_ms()}-")
    assert [m.subject for m in list_inbox(bob.directory)] == ["hi"]
    ledger = sent.list_sent(bus_catalog, "h1.alice")
    assert [sent.row(m) for m in ledger] == [{
        "filename": receipt.filename, "ts": clock.wall_ms(), "to": "h1.bob", "from": "h1.alice",
        "subject": "hi", "inReplyTo": None, "tags": [], "priority": None,
    }]
    assert (bus_catalog / "agents/h1/alice/resources/sent" / receipt.filename).is_file()
    assert os.listdir(staging_directory(bus_catalog)) == []  # no temp left behind


def test_a_sender_that_is_not_a_seat_keeps_its_ledger_in_the_control_plane(bus_catalog: Path, clock) -> None:
    alice = resolve_seat(bus_catalog, "alice")
    receipt = send(bus_catalog, alice, sender="operator", body="hi", clock=clock)
    assert message_names(bus_catalog / ".st2/sent/operator") == [receipt.filename]


def test_the_same_idempotency_key_yields_one_message(bus_catalog: Path, clock) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    first = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    clock.advance(5)
    again = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    assert (first.created, again.created, again.filename) == (True, False, first.filename)
    assert again.json_row() == {"recipient": "h1.bob", "filename": first.filename,
                                "receiptId": first.filename, "outcome": "deduplicated"}
    assert message_names(inbox_of(bob.directory)) == [first.filename]
    assert len(sent.list_sent(bus_catalog, "h1.alice")) == 1
    other = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k2", clock=clock)
    assert other.filename != first.filename


def test_a_key_reused_with_another_message_fails_and_writes_nothing(bus_catalog: Path, clock, snapshot) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    before = snapshot(bus_catalog)
    with pytest.raises(BusError, match="idempotency key reused with a different message"):
        send(bus_catalog, bob, sender="h1.alice", body="changed", idempotency_key="k1", clock=clock)
    assert snapshot(bus_catalog) == before


def test_a_replay_after_the_reservation_finishes_the_same_publication(bus_catalog: Path, clock) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    first = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    # Crash seam: the reservation is durable but the message never reached the inbox.
    os.unlink(inbox_of(bob.directory) / first.filename)
    replay = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    assert replay.filename == first.filename
    assert message_names(inbox_of(bob.directory)) == [first.filename]


def test_a_replay_honours_the_archive_receipt_and_never_restores_the_inbox_copy(bus_catalog: Path, clock) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    first = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    archive_message(bob.directory, first.filename)
    replay = send(bus_catalog, bob, sender="h1.alice", body="once", idempotency_key="k1", clock=clock)
    assert replay.filename == first.filename
    assert message_names(inbox_of(bob.directory)) == []
    assert message_names(archive_of(bob.directory)) == [first.filename]


def test_publish_exclusive_never_replaces_an_existing_name(tmp_path: Path) -> None:
    staging = tmp_path / "staging"
    staging.mkdir()
    target = tmp_path / "1784649988123-abc23z.md"
    assert publish_exclusive(target, b"first", staging)
    assert not publish_exclusive(target, b"second", staging)
    assert target.read_bytes() == b"first"
    assert os.listdir(staging) == []


def test_sweep_removes_only_temps_of_dead_writers(tmp_path: Path) -> None:
    dead_pid = 2**22 + 12345  # above the default pid_max: never a live process
    (tmp_path / f".1784649988123-abc23z.md.{dead_pid}.aaaaaaaaaaaa.tmp").write_bytes(b"partial")
    live = tmp_path / f".1784649988123-abc23z.md.{os.getpid()}.bbbbbbbbbbbb.tmp"
    live.write_bytes(b"in flight")
    assert sweep_orphans(tmp_path) == 1
    assert os.listdir(tmp_path) == [live.name]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sender=st.text(max_size=30), subject=st.text(max_size=50))
def test_an_accepted_send_round_trips_and_a_refused_one_writes_nothing(bus_catalog: Path, snapshot,
                                                                        sender: str, subject: str) -> None:
    bob = resolve_seat(bus_catalog, "robert")
    before = snapshot(bus_catalog)
    try:
        receipt = send(bus_catalog, bob, sender=sender, subject=subject, body="b")
    except BusError:
        assert snapshot(bus_catalog) == before
        return
    message = next(m for m in list_inbox(bob.directory) if m.filename == receipt.filename)
    assert (message.sender, message.subject, message.body) == (sender, subject, "b\n")


def test_mail_is_never_delivered_through_a_symlink_out_of_the_catalog(bus_catalog: Path, tmp_path: Path,
                                                                      snapshot) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (bus_catalog / "agents/h1/alice/resources").symlink_to(outside)
    with pytest.raises(BusError, match="unsafe mailbox"):
        send(bus_catalog, resolve_seat(bus_catalog, "alice"), sender="h1.bob", body="x")
    assert snapshot(outside) == {}


def test_a_catalog_reached_through_a_symlink_still_delivers(bus_catalog: Path, tmp_path: Path, clock) -> None:
    link = tmp_path / "catalog-link"
    link.symlink_to(bus_catalog)
    receipt = send(link, resolve_seat(link, "alice"), sender="h1.bob", body="x", clock=clock)
    assert message_names(inbox_of(bus_catalog / "agents/h1/alice")) == [receipt.filename]
