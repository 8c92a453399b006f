"""Boxes: reading is a move, the archive file is a durable receipt."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.bus import BusError
from st2.bus.mailbox import (
    ArchiveOutcome,
    archive_message,
    archive_of,
    inbox_of,
    list_box,
    list_inbox,
    read_message,
)
from st2.bus.envelope import render

NAME = "1784649988123-abc23z.md"


def deliver(seat: Path, name: str = NAME, subject: str = "once") -> bytes:
    inbox_of(seat).mkdir(parents=True, exist_ok=True)
    data = render("h1.alice", subject, None, (), None, "handle once")
    (inbox_of(seat) / name).write_bytes(data)
    return data


def test_archive_moves_the_message_under_the_same_name(tmp_path: Path) -> None:
    data = deliver(tmp_path)
    assert archive_message(tmp_path, NAME) is ArchiveOutcome.ARCHIVED
    assert not (inbox_of(tmp_path) / NAME).exists()
    assert (archive_of(tmp_path) / NAME).read_bytes() == data


def test_archive_receipt_shadows_and_idempotently_cleans_a_restored_inbox_copy(tmp_path: Path) -> None:
    deliver(tmp_path)
    archive_message(tmp_path, NAME)
    receipt = (archive_of(tmp_path) / NAME).read_bytes()
    for _ in range(3):  # repeatably: every restore is shadowed and cleaned, the receipt never changes
        (inbox_of(tmp_path) / NAME).write_bytes(b"stale replica restored by a sync engine")
        assert [m.filename for m in list_box(inbox_of(tmp_path))] == [NAME]  # raw: it is there
        assert list_inbox(tmp_path) == []  # logically: settled
        assert not (inbox_of(tmp_path) / NAME).exists()  # and the reader cleaned it
        (inbox_of(tmp_path) / NAME).write_bytes(b"restored again")
        assert archive_message(tmp_path, NAME) is ArchiveOutcome.ALREADY_ARCHIVED
        assert not (inbox_of(tmp_path) / NAME).exists()
        assert archive_message(tmp_path, NAME) is ArchiveOutcome.ALREADY_ARCHIVED
        assert (archive_of(tmp_path) / NAME).read_bytes() == receipt


def test_listing_the_inbox_removes_only_settled_names(tmp_path: Path) -> None:
    other = "1784649988124-bbbbbb.md"
    deliver(tmp_path)
    deliver(tmp_path, other)
    archive_message(tmp_path, NAME)
    (inbox_of(tmp_path) / NAME).write_bytes(b"restored")
    assert [m.filename for m in list_inbox(tmp_path)] == [other]
    assert sorted(os.listdir(inbox_of(tmp_path))) == [other]
    assert [m.filename for m in list_inbox(tmp_path)] == [other]


def test_an_empty_inbox_is_one_listing_and_the_archive_is_read_only_beside_mail(tmp_path: Path,
                                                                                monkeypatch) -> None:
    """A DING pass lists its seat's inbox every second: with nothing unread it is one listing."""
    import st2.bus.mailbox as mailbox

    deliver(tmp_path)
    archive_message(tmp_path, NAME)
    listed = []
    real = mailbox.message_names
    monkeypatch.setattr(mailbox, "message_names", lambda directory: listed.append(Path(directory).name) or real(directory))
    assert list_inbox(tmp_path) == [] and listed == ["inbox"]
    deliver(tmp_path, "1784649988124-bbbbbb.md")
    listed.clear()
    assert [m.filename for m in list_inbox(tmp_path)] == ["1784649988124-bbbbbb.md"]
    assert listed == ["inbox", "archive"]


def test_archiving_a_message_in_neither_box_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BusError, match="no message"):
        archive_message(tmp_path, NAME)


def test_a_filename_outside_the_grammar_is_refused_before_any_path_is_touched(tmp_path: Path) -> None:
    for name in ("../agent.kdl", "x/../../y.md", "a\x00.md"):
        with pytest.raises(BusError, match="not a message filename"):
            archive_message(tmp_path, name)
        with pytest.raises(BusError, match="not a message filename"):
            read_message(inbox_of(tmp_path), name)


def test_listing_skips_non_messages_symlinks_and_sorts_by_time(tmp_path: Path) -> None:
    deliver(tmp_path, "1784649988125-cccccc.md", "late")
    deliver(tmp_path, "1784649988123-zzzzzz.md", "early")
    (inbox_of(tmp_path) / "notes.txt").write_text("x")
    (tmp_path / "outside.md").write_bytes(render("evil", "outside", None, (), None, ""))
    os.symlink(tmp_path / "outside.md", inbox_of(tmp_path) / "1784649988124-ssssss.md")
    assert [m.subject for m in list_inbox(tmp_path)] == ["early", "late"]


def test_a_restored_copy_beside_a_crash_mid_archive_is_finished_by_the_next_archive(tmp_path: Path) -> None:
    # A crash between link and unlink leaves both names: the receipt already settles it.
    data = deliver(tmp_path)
    archive_of(tmp_path).mkdir(parents=True)
    os.link(inbox_of(tmp_path) / NAME, archive_of(tmp_path) / NAME)
    assert list_inbox(tmp_path) == []
    assert archive_message(tmp_path, NAME) is ArchiveOutcome.ALREADY_ARCHIVED
    assert (archive_of(tmp_path) / NAME).read_bytes() == data
