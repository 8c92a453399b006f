"""The seat watch (st2/catalog/seat_watch.py): mutation-only wake-ups, so the notifier's own reads of its
inbox and status never wake it."""

from __future__ import annotations

import os

import pytest

from ding_support import make_seat, write_message
from st2.catalog.seat_watch import SeatWatch


@pytest.mark.process
def test_own_reads_never_wake_but_inbox_and_status_mutations_do(catalog):
    seat = make_seat(catalog, "builder")
    (seat / "status").write_text("available\n")
    name = write_message(seat, "first")
    watch = SeatWatch(seat)
    assert watch.active
    for _ in range(50):  # what a pass does: list and read the inbox, read status
        os.listdir(seat / "resources" / "inbox")
        (seat / "resources" / "inbox" / name).read_bytes()
        (seat / "status").read_bytes()
    assert watch.wait(0.2) is False
    (seat / "harness-state").write_text("x")  # another record in the seat: not ours
    assert watch.wait(0.2) is False
    write_message(seat, "second")
    assert watch.wait(2.0) is True
    (seat / "status").write_text("busy\n")
    assert watch.wait(2.0) is True
    assert watch.wakeups == 2


def test_the_seat_watch_mask_is_mutations_only(tmp_path):
    from inotify_simple import INotify, flags

    from st2.fs.watch import MUTATION_MASK

    assert MUTATION_MASK == (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
                             | flags.MOVED_TO | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
    message = tmp_path / "1788000000000-abcdef.md"
    message.write_text("---\n---\n")
    with INotify() as notify:
        notify.add_watch(str(tmp_path), MUTATION_MASK)
        message.read_bytes()
        assert notify.read(timeout=0) == []                         # a read reports nothing
        message.unlink()                                            # archiving removes it from the inbox
        assert any(event.mask & flags.DELETE for event in notify.read(timeout=0))
