"""Scoped delivery-input wakeups (docs/delivery.md §Scoped wake-ups): the Codex pump's watch — the one production gives it,
shared through a real ``st2 seat-host`` — wakes on the seat's ``resources/inbox`` and ``status``
only, never on the records its own process writes beside them (harness-state, harness-context,
driver-diagnostic with their locks and staged siblings)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support import start_seat_host
from st2.base.clock import FakeClock
from st2.records import driver_diagnostic, harness_context, harness_state, status
from st2.seathost.watch_client import SharedSeatWatch, open_seat_watch


def mail(seat: Path, name: str) -> None:
    temporary = seat / "resources" / f".{name}.tmp"
    temporary.write_text("---\nfrom: h.peer\n---\nhi\n")
    os.replace(temporary, seat / "resources" / "inbox" / name)


@pytest.mark.process
def test_the_pump_wakes_on_inbox_and_status_but_not_on_its_own_records(catalog, tmp_path) -> None:
    seat = catalog / "agents" / "h" / "coder"
    (seat / "resources" / "inbox").mkdir(parents=True)
    # A second seat on the same host is the barrier: the host reads its one inotify instance in
    # order and sends a batch's wake-ups after reading the batch, so once a second barrier mail
    # (written after the first one's wake-up arrived, hence read in a later batch) has woken its
    # watch, any wake-up the first seat's earlier writes caused is already in that seat's pipe.
    barrier_seat = catalog / "agents" / "h" / "barrier"
    (barrier_seat / "resources" / "inbox").mkdir(parents=True)
    scope = tmp_path / "scope"
    scope.mkdir()
    host = start_seat_host(scope)
    lines: list[str] = []
    watch = open_seat_watch(seat, scope, lines.append)             # what the Codex session calls
    barrier = open_seat_watch(barrier_seat, scope, lines.append)
    try:
        assert isinstance(watch, SharedSeatWatch) and watch.active and isinstance(barrier, SharedSeatWatch)
        clock = FakeClock()
        token = harness_state.session_token()
        seq = harness_state.claim(seat, "h.coder", "codex", token, clock)
        harness_state.Writer(seat, "h.coder", "codex", clock, pty_session="h.coder", incarnation=token,
                             claimed_seq=seq).observe("idle")
        harness_context.Writer(seat, "h.coder", "codex", token, clock).publish(harness_context.Reading(used_tokens=1))
        driver_diagnostic.Publisher(seat, "codex", clock).publish("delivery", "deliveryRejected", "promptTransport")
        for name in ("1788000000000-bbbbbb.md", "1788000000001-bbbbbb.md"):
            mail(barrier_seat, name)
            assert barrier.wait(30.0) is True
        assert watch.drain() is False                       # its own records: no wake-up
        mail(seat, "1788000000002-aaaaaa.md")
        assert watch.wait(30.0) is True                     # mail
        status.refresh(seat, clock)
        assert watch.wait(30.0) is True                     # presence
        assert lines == []
    finally:
        watch.close()
        barrier.close()
        host.kill()
        host.wait(timeout=10)
