"""Scoped delivery-input wakeups (seed 003): the Codex pump's watch wakes on the seat's
``resources/inbox`` and ``status`` only — never on the records its own process writes beside
them (harness-state, harness-context, driver-diagnostic with their locks and staged siblings)."""

from __future__ import annotations

import pytest

from st2.base.clock import FakeClock
from st2.catalog.seat_watch import SeatWatch
from st2.records import driver_diagnostic, harness_context, harness_state, status


@pytest.mark.process
def test_the_pump_wakes_on_inbox_and_status_but_not_on_its_own_records(catalog) -> None:
    seat = catalog / "agents" / "h" / "coder"
    (seat / "resources" / "inbox").mkdir(parents=True)
    watch = SeatWatch(seat)
    assert watch.active
    clock = FakeClock()
    token = harness_state.session_token()
    seq = harness_state.claim(seat, "h.coder", "codex", token, clock)
    harness_state.Writer(seat, "h.coder", "codex", clock, pty_session="h.coder", incarnation=token,
                         claimed_seq=seq).observe("idle")
    harness_context.Writer(seat, "h.coder", "codex", token, clock).publish(harness_context.Reading(used_tokens=1))
    driver_diagnostic.Publisher(seat, "codex", clock).publish("delivery", "deliveryRejected", "promptTransport")
    assert watch.drain() is False                       # its own records: no wake-up
    (seat / "resources" / "inbox" / "1788000000000-aaaaaa.md").write_text("---\nfrom: x\n---\nhi\n")
    assert watch.drain() is True                        # mail
    status.refresh(seat, clock)
    assert watch.drain() is True                        # presence
