"""The notice frame: normalization, bounds, fallbacks, and that nothing escapes one paste frame."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from st2.ding.notice import (BACKLOG_NOTICE, PASTE_END, PASTE_START, SENDER_MAX_CHARS, SUBJECT_MAX_CHARS,
                             normalize_line, notice_id, notice_text, paste_frame)

NAME = "1796000955039-cjqc1g.md"


def test_notice_pins_the_frame_text():
    assert notice_text(NAME, "build the parser", "demo.planner") == (
        "[DING] new st2 message: [id:cjqc1g] build the parser (from demo.planner); check your inbox")
    assert BACKLOG_NOTICE == "[DING] unread st2 messages remain; check your inbox"


def test_empty_fields_fall_back_and_clean_fields_pass_unchanged():
    assert notice_text(NAME, None, None) == (
        "[DING] new st2 message: [id:cjqc1g] (no subject) (from unknown); check your inbox")
    assert notice_text(NAME, " \x1b[31m\t", "\x07") == (
        "[DING] new st2 message: [id:cjqc1g] (no subject) (from unknown); check your inbox")
    assert normalize_line("plain words, kept") == "plain words, kept"


def test_subject_and_sender_are_bounded_but_id_and_instruction_are_not():
    text = notice_text(NAME, "s" * 10_000, "f" * 1_000)
    assert text == f"[DING] new st2 message: [id:cjqc1g] {'s' * SUBJECT_MAX_CHARS} (from {'f' * SENDER_MAX_CHARS}); check your inbox"
    assert notice_text(NAME, "s" * SUBJECT_MAX_CHARS, "x") == (
        f"[DING] new st2 message: [id:cjqc1g] {'s' * SUBJECT_MAX_CHARS} (from x); check your inbox")


def test_escape_sequences_and_controls_become_single_spaces():
    assert normalize_line("a\x1b[201~b") == "a b"
    assert normalize_line("a\x1b]0;title\x07b\r\nc\u202ed\u2028e") == "a b c d e"
    assert normalize_line("tail\x1b[") == "tail"
    assert notice_id("not-a-message.md") == "not-a-message"


def test_paste_frame_is_one_bracketed_frame():
    assert paste_frame("[DING] x\x1b[201~\ny") == "\x1b[200~[DING] x y\x1b[201~"


@settings(max_examples=300, deadline=None)
@given(subject=st.one_of(st.none(), st.text(max_size=10_500)),
       sender=st.one_of(st.none(), st.text(max_size=400)),
       injected=st.sampled_from(["\x1b[201~", "\x1b[200~", "\r", "\n", "\x1b]52;c;AAAA\x07", "\x9b201~", "\x00", "\u2029"]))
def test_no_subject_or_sender_escapes_the_single_paste_frame(subject, sender, injected):
    hostile_subject = None if subject is None else subject[: len(subject) // 2] + injected + subject[len(subject) // 2:]
    text = notice_text(NAME, hostile_subject, None if sender is None else injected + sender)
    frame = paste_frame(text)
    body = frame[len(PASTE_START):-len(PASTE_END)]
    assert frame.startswith(PASTE_START) and frame.endswith(PASTE_END)
    assert "\x1b" not in body and all(ch.isprintable() for ch in body)
    assert body.startswith("[DING] new st2 message: [id:cjqc1g] ") and body.endswith("; check your inbox")
    assert len(body) <= len(notice_text(NAME, "s" * SUBJECT_MAX_CHARS, "f" * SENDER_MAX_CHARS))
    assert body == text
