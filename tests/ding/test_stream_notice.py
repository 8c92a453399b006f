"""DING marks stream work: a stream event's notice reads differently from mail, in every screen
grammar (the four TUI captures and the shell line grammar), and stays inert text."""

from __future__ import annotations

from pathlib import Path

import pytest

from ding_support import make_seat, write_message
from st2.base.clock import FakeClock
from st2.bus.addressing import Seat
from st2.bus.envelope import render
from st2.bus.mailbox import list_inbox
from st2.bus.stream import emit
from st2.catalog.layout import CatalogPaths
from st2.ding.harness import TUI_ADAPTERS, adapters_for
from st2.ding.notice import (PASTE_END, PASTE_START, message_notice, notice_text, paste_frame, shell_comment,
                             stream_notice_text, stream_of)
from st2.ding.notifier import Notifier, Settings
from st2.ding.ownership import Ownership, OwnershipStore
from st2.drivers.screen import ComposerState, ReceiptState, Screen, classify, receipt

REPO = Path(__file__).resolve().parents[2]
NAME = "1796000955039-p3p3p3.md"
MAIL = "[DING] new st2 message: [id:p3p3p3] build the parser (from demo.planner); check your inbox"
# The same id and the same length as MAIL, so it takes MAIL's place in a capture cell for cell.
STREAM = "[DING] st2-stream work on stream ci: [id:p3p3p3] resource docs rev 17 ok; check your inbox"
CAPTURES = {
    "claude": REPO / "captures" / "claude-code" / "2.1.197" / "screens",
    "codex": REPO / "captures" / "codex" / "0.171.0" / "screens",
    "pi": REPO / "captures" / "pi" / "0.73.1" / "screens",
    "omp": REPO / "captures" / "omp" / "18.2.3" / "screens",
}


def test_the_stream_notice_is_pinned_in_full():
    assert stream_notice_text(NAME, "resource docs rev 17 ok", "ci") == STREAM
    assert len(STREAM) == len(MAIL)
    tags = ("st2-stream", "stream:ci")
    assert message_notice(NAME, "resource docs rev 17 ok", "stream:ci", tags) == STREAM
    assert message_notice(NAME, "build the parser", "demo.planner", ()) == MAIL
    assert message_notice(NAME, None, "stream:ci", tags) == (
        "[DING] st2-stream work on stream ci: [id:p3p3p3] (no subject); check your inbox")


@pytest.mark.parametrize("sender, tags", [
    ("demo.planner", ("st2-stream", "stream:ci")),          # a mail sender adding the tags stays mail
    ("stream:ci", ("stream:ci",)),                          # no st2-stream tag
    ("stream:ci", ("st2-stream", "stream:ci", "stream:cd")),  # two streams: not one stream's work
    ("stream:cd", ("st2-stream", "stream:ci")),             # sender and tag disagree
    ("stream:", ("st2-stream", "stream:")),                 # no name
])
def test_only_a_consistent_stream_event_is_marked(sender, tags):
    assert stream_of(sender, tags) is None
    assert message_notice(NAME, "x", sender, tags).startswith("[DING] new st2 message: [id:p3p3p3] x (from ")


def test_a_hostile_subject_stays_inside_one_inert_frame():
    text = stream_notice_text(NAME, "a\x1b[201~\nrm -rf /\u202e", "ci")
    assert text == "[DING] st2-stream work on stream ci: [id:p3p3p3] a rm -rf /; check your inbox"
    body = paste_frame(text)[len(PASTE_START):-len(PASTE_END)]
    assert body == text and "\x1b" not in body


def test_the_shell_grammar_types_the_mark_as_an_inert_comment():
    shell = adapters_for(None)[0]
    assert shell.notice(STREAM) == (
        "# [DING] st2-stream work on stream ci: [id:p3p3p3] resource docs rev 17 ok check your inbox")
    assert shell.notice(MAIL) == (
        "# [DING] new st2 message: [id:p3p3p3] build the parser (from demo.planner) check your inbox")
    assert shell.notice(STREAM) == shell_comment(STREAM)
    typed = shell.notice(STREAM)
    rows = ["older", typed, ""]
    screen = Screen.parse("\n".join(rows) + "\n", 0, 2, 120)
    assert receipt(screen, typed, adapters_for(None)) is ReceiptState.ACCEPTED
    assert receipt(screen, shell.notice(MAIL), adapters_for(None)) is ReceiptState.NOT_RETAINED


def _capture(harness: str, name: str, replace: bool) -> Screen:
    directory = CAPTURES[harness]
    raw = (directory / f"{name}.ansi").read_text()
    assert raw.count(MAIL) == 1
    x, y, width = (int(field) for field in (directory / f"{name}.cursor").read_text().split())
    return Screen.parse(raw.replace(MAIL, STREAM) if replace else raw, x, y, width)


@pytest.mark.parametrize("harness", sorted(CAPTURES))
def test_every_tui_grammar_tells_the_stream_notice_from_mail(harness):
    pasted = _capture(harness, "pasted", replace=True)
    assert classify(pasted, STREAM, TUI_ADAPTERS) is ComposerState.EXACT_SAFE
    assert classify(pasted, MAIL, TUI_ADAPTERS) is ComposerState.CHANGED
    submitted = _capture(harness, "submitted", replace=True)
    assert receipt(submitted, STREAM, TUI_ADAPTERS) is ReceiptState.ACCEPTED
    assert receipt(submitted, MAIL, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED
    # and the unedited mail capture does not read as the stream notice
    assert receipt(_capture(harness, "submitted", replace=False), STREAM, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED


def test_the_notifier_marks_a_published_stream_event_and_not_mail(catalog: Path, tmp_path: Path, clock: FakeClock):
    seat = make_seat(catalog, "builder")
    mail = write_message(seat, "build the parser", sender="demo.planner")
    result = emit(catalog, Seat("h", "builder", seat, streams=("ci",)), stream="ci", event_id="r7",
                  body="ok", subject="resource docs rev 17 ok", clock=clock)
    store = OwnershipStore(tmp_path / "ding", tmp_path / "staging", "h.builder")
    notifier = Notifier(CatalogPaths(catalog).seat("h", "builder"), None, store, adapters_for(None),
                        clock, Settings(), log=lambda line: None)
    notifier.state = Ownership("h.builder", started=True)  # past the start: each message is a head
    messages = {message.filename: message for message in list_inbox(seat)}
    notices = {filename: message_notice(m.filename, m.subject, m.sender, m.tags) for filename, m in messages.items()}
    assert notices[mail] == notice_text(mail, "build the parser", "demo.planner")
    event_id = result.filename[:-3].split("-")[1]
    assert notices[result.filename] == (
        f"[DING] st2-stream work on stream ci: [id:{event_id}] resource docs rev 17 ok; check your inbox")
    head = notifier._candidate({result.filename: messages[result.filename]})
    assert head.notice == shell_comment(notices[result.filename])


def test_render_of_a_stream_event_carries_what_the_mark_reads():
    data = render("stream:ci", "s", None, ("st2-stream", "stream:ci"), None, "b").decode()
    assert data == "---\nfrom: stream:ci\nsubject: s\ntags: st2-stream, stream:ci\n---\nb\n"
