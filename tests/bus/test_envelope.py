"""Front matter: order, permissive reading, and refusal of hostile subjects and senders."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from st2.bus import BusError
from st2.bus.envelope import MAX_MESSAGE_BYTES, parse, render, reply_subject

NAME = "1784649988123-abc23z.md"


def test_front_matter_is_written_in_the_pinned_order() -> None:
    data = render("h1.alice", "hi", "1784649988000-aaaaaa.md", ("urgent", "review"), "high", "hello")
    assert data == (
        b"---\nfrom: h1.alice\nsubject: hi\nin-reply-to: 1784649988000-aaaaaa.md\n"
        b"tags: urgent, review\npriority: high\n---\nhello\n"
    )


def test_absent_fields_are_not_written() -> None:
    assert render("h1.alice", None, None, (), None, "body\n") == b"---\nfrom: h1.alice\n---\nbody\n"


def test_render_then_parse_round_trips() -> None:
    message = parse(NAME, render("h1.alice", "hi", None, ("a", "b c"), "low", "line 1\nline 2\n"))
    assert message.row(include_body=True) == {
        "filename": NAME, "ts": 1784649988123, "from": "h1.alice", "subject": "hi",
        "inReplyTo": None, "tags": ["a", "b c"], "priority": "low", "body": "line 1\nline 2\n",
    }


def test_an_empty_subject_is_not_an_absent_one() -> None:
    assert parse(NAME, render("x", "", None, (), None, "b")).subject == ""
    assert parse(NAME, render("x", None, None, (), None, "b")).subject is None


def test_missing_or_unterminated_front_matter_is_all_body() -> None:
    assert parse(NAME, b"just a body").row(include_body=True)["body"] == "just a body"
    assert parse(NAME, b"just a body").sender is None
    assert parse(NAME, b"---\nfrom: x\nno closing line").sender is None


def test_a_body_line_of_dashes_does_not_end_the_front_matter_early() -> None:
    message = parse(NAME, render("x", "s", None, (), None, "above\n---\nbelow\n"))
    assert (message.sender, message.subject, message.body) == ("x", "s", "above\n---\nbelow\n")


def test_unknown_keys_are_kept_aside_and_crlf_front_matter_is_read() -> None:
    message = parse(NAME, b"---\r\nfrom: peer\r\nsource: ci\r\n---\r\nbody")
    assert message.sender == "peer"
    assert message.extra == {"source": "ci"}


@pytest.mark.parametrize(
    ("sender", "subject", "needle"),
    [
        ("x", "a\nfrom: forged", "control character"),
        ("x", "a\rb", "control character"),
        ("x", "a --- b", "'---'"),
        ("x", "bell\x07", "control character"),
        ("x", "c1\x85", "control character"),
        ("x", "sep\u2028x", "control character"),
        ("x", "bidi\u202e", "control character"),
        ("x", " padded", "whitespace"),
        ("x", "s" * 1001, "limit is 1000"),
        ("a\nsubject: forged", "ok", "control character"),
        ("---", "ok", "'---'"),
        ("a/b", "ok", "'/'"),
        ("a..b", "ok", "'..'"),
        ("a\x00b", "ok", "NUL"),
        ("", "ok", "empty"),
        ("two words", "ok", "whitespace"),
    ],
)
def test_hostile_subjects_and_senders_are_refused(sender: str, subject: str, needle: str) -> None:
    with pytest.raises(BusError, match=needle if needle.startswith("'") else needle):
        render(sender, subject, None, (), None, "body")


def test_ordinary_unicode_subjects_pass() -> None:
    assert parse(NAME, render("h1.alice", "réunion: 9h — ok ✓", None, (), None, "")).subject == (
        "réunion: 9h — ok ✓"
    )


@pytest.mark.parametrize("tags", [("a,b",), ("",), (" a",), ("x\ny",)])
def test_hostile_tags_are_refused(tags) -> None:
    with pytest.raises(BusError):
        render("x", None, None, tags, None, "body")


def test_priority_is_one_of_three_words() -> None:
    with pytest.raises(BusError, match="priority"):
        render("x", None, None, (), "urgent", "body")


def test_in_reply_to_must_be_a_message_filename() -> None:
    with pytest.raises(BusError, match="in-reply-to"):
        render("x", None, "../../etc/passwd", (), None, "body")


def test_message_size_is_bounded_with_a_clear_error() -> None:
    render("x", None, None, (), None, "a" * (MAX_MESSAGE_BYTES - 100))
    with pytest.raises(BusError, match=f"limit is {MAX_MESSAGE_BYTES} bytes"):
        render("x", None, None, (), None, "a" * MAX_MESSAGE_BYTES)


def test_reply_subject_prefixes_once() -> None:
    assert reply_subject("hi") == "re: hi"
    assert reply_subject("RE: hi") == "RE: hi"
    assert reply_subject(None) is None


@settings(max_examples=300, deadline=None)
@given(sender=st.text(max_size=40), subject=st.text(max_size=60))
def test_every_accepted_header_round_trips_exactly(sender: str, subject: str) -> None:
    try:
        data = render(sender, subject, None, (), None, "body\n")
    except BusError:
        return
    message = parse(NAME, data)
    assert (message.sender, message.subject, message.body) == (sender, subject, "body\n")


def test_shown_escapes_what_a_header_may_not_carry_and_leaves_the_rest() -> None:
    from st2.bus.envelope import shown

    assert shown("a\x1b[2Jb\u202e") == "a\\x1b[2Jb\\u202e"
    assert shown("x\n\ty\x07", multiline=True) == "x\n\ty\\x07"
    assert shown("réunion ✓") == "réunion ✓"
    assert shown(None) == ""
