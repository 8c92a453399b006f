"""What the roster reads from the bus: logical unread counts and origin-timed activity."""

from __future__ import annotations

import os
from pathlib import Path

from st2.bus.envelope import render
from st2.bus.mailbox import archive_message, inbox_of
from st2.bus.roster import bus_activity_ms, inbox_count


def put(seat: Path, name: str) -> None:
    inbox_of(seat).mkdir(parents=True, exist_ok=True)
    (inbox_of(seat) / name).write_bytes(render("x", None, None, (), None, ""))


def test_inbox_count_excludes_a_restored_copy_its_receipt_settles(tmp_path: Path) -> None:
    assert inbox_count(tmp_path) == 0
    put(tmp_path, "1784649988123-aaaaaa.md")
    put(tmp_path, "1784649988124-bbbbbb.md")
    archive_message(tmp_path, "1784649988123-aaaaaa.md")
    put(tmp_path, "1784649988123-aaaaaa.md")  # restored by a sync engine
    assert inbox_count(tmp_path) == 1


def test_activity_is_the_newest_filename_time_not_a_file_mtime(tmp_path: Path) -> None:
    assert bus_activity_ms(tmp_path) is None
    put(tmp_path, "1784649988123-aaaaaa.md")
    put(tmp_path, "1784649988999-bbbbbb.md")
    archive_message(tmp_path, "1784649988999-bbbbbb.md")
    os.utime(inbox_of(tmp_path) / "1784649988123-aaaaaa.md", (4_000_000_000, 4_000_000_000))
    assert bus_activity_ms(tmp_path) == 1784649988999
