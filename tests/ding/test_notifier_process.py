"""The DING notifier (st2/ding/notifier.py) end to end: the real ``st2 ding`` against the stand-in
TUI in a real tmux pane. Its in-process tests are test_notifier.py."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ding_support import (Notifier, Standin, archive, make_seat, ownership_record, poll_for, return_gates,
                          typed_backlog_notice, typed_notice,
                          write_message)
from st2.ding.notice import PASTE_END, PASTE_START
from st2.records import status as status_record
from st2.base.clock import SYSTEM_CLOCK

pytestmark = pytest.mark.process


@pytest.fixture
def standin(tmp_path: Path):
    program = Standin(tmp_path)
    yield program
    program.close()


@pytest.fixture
def seat(catalog: Path) -> Path:
    return make_seat(catalog, "builder")


def frame(text: str) -> bytes:
    return (PASTE_START + text + PASTE_END).encode()


def message_id(name: str) -> str:
    """The ``[id:<rand6>]`` tag a notice of message file ``name`` carries."""
    return f"[id:{name.partition('-')[2][:6]}]"


def expected_notice(seat: Path, name: str, subject: str, sender: str = "h.planner") -> str:
    return typed_notice(name, subject, sender)


def test_fifty_messages_across_busy_and_idle_arrive_once_each_in_order(tmp_path, catalog, seat, standin):
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        names = []
        for index in range(50):
            if index % 10 == 0:
                standin.set_mode("busy" if (index // 10) % 2 == 0 else "idle")
            names.append(write_message(seat, f"task {index}"))
            time.sleep(0.02)
        standin.set_mode("idle")
        notices = [expected_notice(seat, name, f"task {index}") for index, name in enumerate(names)]
        poll_for(lambda: len(standin.events("submit")) >= 50, timeout=40, what="50 submitted notices")
        notifier.runs_on(passes=3)  # anything extra would show up now
        submitted = [text for _, text in standin.events("submit")]
        assert submitted == notices
        received = standin.received()
        for notice in notices:
            assert received.count(frame(notice)) == 1
        assert received.count(PASTE_START.encode()) == 50
        assert any(kind == "queue" for kind, _ in standin.events())  # busy really queued some
    finally:
        notifier.stop()


def test_startup_backlog_becomes_one_notice_then_new_mail_is_fifo(tmp_path, catalog, seat, standin):
    backlog = [write_message(seat, "old one"), write_message(seat, "old two")]
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        poll_for(lambda: standin.events("submit"), what="the backlog notice")
        fresh = write_message(seat, "new one")
        poll_for(lambda: len(standin.events("submit")) >= 2, what="the new notice")
        notifier.runs_on(passes=3)
        assert [text for _, text in standin.events("submit")] == [
            typed_backlog_notice(), expected_notice(seat, fresh, "new one")]
        # The backlog's messages are not noticed one by one: no frame names either of them.
        received = standin.received()
        assert [name for name in backlog if message_id(name).encode() in received] == []
        assert message_id(fresh).encode() in received  # the twin: a noticed message is named
    finally:
        notifier.stop()


def test_no_backlog_notice_when_the_inbox_starts_empty(tmp_path, catalog, seat, standin):
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        name = write_message(seat, "only one")
        poll_for(lambda: standin.events("submit"), what="the notice")
        notifier.runs_on(passes=3)
        assert [text for _, text in standin.events("submit")] == [expected_notice(seat, name, "only one")]
    finally:
        notifier.stop()


def test_a_human_draft_is_never_pasted_over_or_submitted(tmp_path, catalog, seat, standin):
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state", retry_backoff=0.3)
    try:
        notifier.wait_started()
        standin.pane.type("half a thought")
        poll_for(lambda: "half a thought" in standin.pane.capture(), what='"half a thought" in standin.pane.capture()')
        name = write_message(seat, "while you type")
        notifier.runs_on(passes=1, attempts=3, what="three attempts held by the draft")  # several backoffs
        assert PASTE_START.encode() not in standin.received()
        assert standin.events("submit") == []
        # The human finishes and submits their own line; only then does the notice go in.
        standin.pane.tmux("send-keys", "-t", "st2", "Enter")
        poll_for(lambda: len(standin.events("submit")) >= 2, what="the notice after the draft")
        assert [text for _, text in standin.events("submit")] == [
            "half a thought", expected_notice(seat, name, "while you type")]
    finally:
        notifier.stop()


def test_a_dim_placeholder_is_not_a_draft(tmp_path, catalog, seat):
    program = Standin(tmp_path, placeholder='Try "refactor the parser"')
    notifier = Notifier(catalog, "builder", program.socket, tmp_path / "state")
    try:
        poll_for(lambda: 'Try "refactor the parser"' in program.pane.capture(), what='\'Try "refactor the parser"\' in program.pane.capture()')
        notifier.wait_started()
        name = write_message(seat, "placeholder showing")
        poll_for(lambda: program.events("submit"), what="the notice over a placeholder")
        assert [text for _, text in program.events("submit")] == [expected_notice(seat, name, "placeholder showing")]
    finally:
        notifier.stop()
        program.close()


def test_fresh_dnd_defers_and_busy_does_not(tmp_path, catalog, seat, standin):
    status_record.write(seat, "dnd", SYSTEM_CLOCK)
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        name = write_message(seat, "held by dnd")
        notifier.runs_on(passes=5, what="passes deferred by dnd")
        assert notifier.progress()["attempts"] == 0          # dnd defers before any probe
        assert standin.received() == b""
        status_record.write(seat, "busy", SYSTEM_CLOCK)  # busy: delivered without waiting
        poll_for(lambda: standin.events("submit"), timeout=5, what="delivery once dnd is lifted")
        assert [text for _, text in standin.events("submit")] == [expected_notice(seat, name, "held by dnd")]
    finally:
        notifier.stop()


def test_a_message_archived_before_its_turn_is_never_noticed(tmp_path, catalog, seat, standin):
    standin.pane.type("draft")  # hold the FIFO behind a human draft
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        read_early = write_message(seat, "read before its turn")
        later = write_message(seat, "still unread")
        archive(seat, read_early)
        standin.pane.tmux("send-keys", "-t", "st2", "C-h", "C-h", "C-h", "C-h", "C-h")
        poll_for(lambda: standin.events("submit"), what="the unread notice")
        notifier.runs_on(passes=3)
        assert [text for _, text in standin.events("submit")] == [expected_notice(seat, later, "still unread")]
    finally:
        notifier.stop()


def test_a_staged_notice_whose_message_is_archived_mid_delivery_is_released_and_the_fifo_moves_on(
        tmp_path, catalog, seat, standin):
    # A frozen TUI (the stand-in stops reading its terminal): the paste waits unread in the PTY,
    # the composer never shows it, so the notice stays staged (pasted, never accepted) and
    # holds the FIFO. The recipient then reads the message another way and archives it: the
    # next inspection finds no notice and the message gone, releases the head without a
    # Return, and the next message is delivered.
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        standin.set_mode("frozen")
        poll_for(lambda: ("mode", "frozen") in standin.events("mode"), what="the stand-in to freeze")
        staged = write_message(seat, "read another way")
        poll_for(lambda: "retrying by inspection only" in notifier.log.read_text(), what="the staged notice to hold")
        assert json.loads(notifier.ownership.read_text())["phase"] == "pasted"
        archive(seat, staged)
        poll_for(lambda: json.loads(notifier.ownership.read_text()).get("head") is None, timeout=15,
                 what="the staged notice of an archived message to be released")
        standin.set_mode("idle")
        released = expected_notice(seat, staged, "read another way")
        poll_for(lambda: standin.events("paste"), what="the thawed TUI to read the staged paste")
        # The human clears the released notice from the composer; the FIFO is free again.
        standin.pane.tmux("send-keys", "-t", "st2", *["C-h"] * (len(released) + 5))
        poll_for(lambda: released not in standin.pane.capture(), what="the composer to be cleared")
        later = write_message(seat, "after the release")
        poll_for(lambda: standin.events("submit"), what="the next notice")
        notifier.runs_on(passes=3)
        assert [text for _, text in standin.events("paste")] == [released, expected_notice(seat, later, "after the release")]
        assert [text for _, text in standin.events("submit")] == [expected_notice(seat, later, "after the release")]
    finally:
        notifier.stop()


def test_notifier_exits_after_its_session_is_gone(tmp_path, catalog, seat, standin):
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state", poll_interval=0.1)
    notifier.wait_started()
    assert notifier.process.poll() is None
    standin.pane.kill()
    assert notifier.process.wait(timeout=10) == 0
    assert "target session is gone" in notifier.log.read_text()


def test_notifier_waits_for_a_session_that_is_not_there_yet(tmp_path, catalog, seat):
    socket = f"/tmp/st2d-missing-{tmp_path.name[-20:]}"
    notifier = Notifier(catalog, "builder", socket, tmp_path / "state", poll_interval=0.1)
    try:
        poll_for(lambda: notifier.log.exists() and "watching" in notifier.log.read_text(), what="startup")
        notifier.runs_on(passes=10, what="ten polls with no session")  # a startup miss is not "gone"
        assert notifier.process.poll() is None
    finally:
        assert notifier.stop() == 0


def test_malformed_ownership_record_holds_and_is_reported(tmp_path, catalog, seat, standin):
    record = ownership_record(tmp_path / "state", catalog, "builder")
    record.parent.mkdir(parents=True)
    record.write_text('{"schema": "st2.ding-ownership.v1", "target": "h.builder", "phase": "pasted"}')
    write_message(seat, "must wait")
    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        poll_for(lambda: "malformed" in notifier.log.read_text(), what="the report")
        notifier.runs_on(passes=5, what="passes holding on the malformed record")
        assert standin.received() == b""
        assert json.loads(record.read_text())["phase"] == "pasted"  # never overwritten
    finally:
        notifier.stop()


def test_hostile_subjects_and_senders_stay_inside_one_frame(tmp_path, catalog, seat, standin):
    from st2.bus.envelope import parse

    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        hostile = [
            b"---\nfrom: evil\x1b[201~\r\x03\nsubject: done\x1b[201~\rrm -rf ~\x1b[200~\x1b]52;c;AA\x07\n---\nbody\n",
            b"---\nfrom: x\nsubject: " + b"A" * 10_000 + b"\n---\nlong\n",
            b"---\nfrom: \x1b[2J\x1b[H\nsubject: \xe2\x80\xae\x1b[31mred\n---\n",
        ]
        names = [write_message(seat, None, raw_front_matter=data) for data in hostile]
        expected = []
        for name, data in zip(names, hostile):
            message = parse(name, data)
            expected.append(typed_notice(name, message.subject, message.sender))
        poll_for(lambda: len(standin.events("submit")) >= 3, timeout=15, what="three notices")
        notifier.runs_on(passes=3)
        assert [text for _, text in standin.events("submit")] == expected
        assert [text for _, text in standin.events("paste")] == expected
        received = standin.received()
        assert received.count(PASTE_START.encode()) == 3 and received.count(PASTE_END.encode()) == 3
        assert all(len(text) < 400 and "\x1b" not in text for text in expected)
    finally:
        notifier.stop()


def test_a_fifo_in_the_inbox_never_mutes_the_notifier(tmp_path, catalog, seat, standin):
    # A FIFO planted in the inbox never blocks the notifier, mail beside it is noticed, and
    # noticing continues after the FIFO is removed.
    import os

    notifier = Notifier(catalog, "builder", standin.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        fifo = seat / "resources" / "inbox" / "1788000000000-fifooo.md"
        os.mkfifo(fifo)
        first = write_message(seat, "beside the fifo")
        poll_for(lambda: any(first.partition("-")[2][:6] in text for _, text in standin.events("submit")),
                 timeout=20, what="the message beside the FIFO to be noticed")
        fifo.unlink()
        second = write_message(seat, "after the fifo")
        poll_for(lambda: any(second.partition("-")[2][:6] in text for _, text in standin.events("submit")),
                 timeout=20, what="the message after the FIFO's removal to be noticed")
        assert notifier.process.poll() is None  # still serving
    finally:
        notifier.stop()


HOSTILE_SUBJECTS = ["hi; touch pwned #", "x $(touch pwned) `touch pwned` && touch pwned | touch pwned",
                    "'; touch pwned; echo '", "\\touch pwned", "a > pwned", "!! ^x^y $HOME ~ * ?"]
HOSTILE_SENDER = "h.planner;touch${IFS}pwned"


@pytest.mark.parametrize("shell", [["bash", "--norc", "--noprofile", "-i"], ["dash", "-i"]], ids=["bash", "dash"])
def test_a_notice_typed_into_an_interactive_shell_seat_runs_nothing(tmp_path, catalog, seat, shell):
    # A shell seat with an empty prompt takes each hostile subject as an inert comment: Return
    # submits the comment, no byte of the subject runs, and the shell is still answering after.
    from ding_support import Pane

    work = tmp_path / "work"
    work.mkdir()
    pane = Pane(["env", "-C", str(work), "PS1=", "PS2=", "HISTFILE=/dev/null", *shell])
    notifier = Notifier(catalog, "builder", pane.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        names = [write_message(seat, None, raw_front_matter=f"---\nfrom: {HOSTILE_SENDER}\nsubject: {subject}\n---\nb\n"
                               .encode()) for subject in HOSTILE_SUBJECTS]
        for name, subject in zip(names, HOSTILE_SUBJECTS):
            typed = typed_notice(name, subject, HOSTILE_SENDER)
            assert typed.startswith("# [DING] new st2 message: [id:")
            assert not set(typed[2:]) & set(";&|<>$`\\'\"*?~{}!^#\n")
            poll_for(lambda: typed in pane.capture(), timeout=30, what=f"the notice of {subject!r} on screen")
        poll_for(lambda: json.loads(ownership_record(tmp_path / "state", catalog, "builder").read_text())
                 .get("head") is None, timeout=30, what="every notice settled")
        pane.type("echo shell-still-answers")
        pane.tmux("send-keys", "-t", "st2", "Enter")
        poll_for(lambda: "\nshell-still-answers" in pane.capture(), timeout=10, what="the shell to answer")
        assert sorted(path.name for path in work.iterdir()) == []  # nothing ran: no pwned file
    finally:
        notifier.stop()
        pane.close()


def test_a_plain_subject_reaches_the_shell_seat_readably(tmp_path, catalog, seat):
    from ding_support import Pane

    pane = Pane(["env", "PS1=", "HISTFILE=/dev/null", "bash", "--norc", "--noprofile", "-i"])
    notifier = Notifier(catalog, "builder", pane.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        name = write_message(seat, "build the parser")
        typed = typed_notice(name, "build the parser", "h.planner")
        assert typed == f"# [DING] new st2 message: [id:{name[14:20]}] build the parser (from h.planner) check your inbox"
        poll_for(lambda: typed in pane.capture(), timeout=30, what="the notice on screen")
    finally:
        notifier.stop()
        pane.close()


def test_the_first_return_waits_for_the_notice_to_show_twice_not_for_a_fixed_delay(tmp_path, catalog, seat):
    # A TUI that draws a paste 0.8 s late and drops a Return sent before it shows (omp 18.2.3
    # swallowed a Return sent the moment a notice showed): a fixed 0.5 s delay would lose
    # the Return there; DING's gate (two adjacent retained-safe observations) waits the text out.
    program = Standin(tmp_path, render_delay=0.8)
    notifier = Notifier(catalog, "builder", program.socket, tmp_path / "state")
    try:
        notifier.wait_started()
        name = write_message(seat, "drawn late")
        poll_for(lambda: program.events("submit"), timeout=10, what="the notice submitted")
        notifier.runs_on(passes=3)
        notice = expected_notice(seat, name, "drawn late")
        assert program.events("swallowed") == []
        assert [text for _, text in program.events("paste")] == [notice]
        assert [text for _, text in program.events("submit")] == [notice]
        [gate] = return_gates(notifier.log)
        assert gate >= 800                                   # never before the text showed
    finally:
        notifier.stop()
        program.close()
