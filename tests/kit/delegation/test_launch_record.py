"""The launch record grammar: `pid=<n> run=<key>`, optionally `start=<ticks>`."""

from __future__ import annotations

import pytest

from st2.kit.delegation.launch_record import LaunchRecord, MalformedRecord, key_of, parse


def test_the_template_spelling_parses() -> None:
    assert parse("pid=4242 run=validate-suite\n") == LaunchRecord(4242, "validate-suite", None)


def test_the_start_field_parses_and_renders_back() -> None:
    record = parse("pid=7 run=k start=123456\n")
    assert record == LaunchRecord(7, "k", 123456)
    assert record.render() == "pid=7 run=k start=123456\n"
    assert LaunchRecord(7, "k").render() == "pid=7 run=k\n"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "the record is empty; a launch record is one line, pid=<n> run=<key>"),
        ("pid=1 run=a\npid=2 run=b\n", "the record holds 2 lines; a launch record is one line"),
        ("pid=1\n", "the record carries no run="),
        ("run=a\n", "the record carries no pid="),
        ("pid=x run=a\n", "pid=x is not a positive process id"),
        ("pid=0 run=a\n", "pid=0 is not a positive process id"),
        ("pid=-3 run=a\n", "pid=-3 is not a positive process id"),
        ("pid=1 run=a start=soon\n", "start=soon is not a count of clock ticks"),
        ("pid=1 run=a owner=me\n", "unknown field 'owner'; a launch record carries pid=, run= and optionally start="),
        ("pid=1 pid=2 run=a\n", "field 'pid' is given twice"),
        ("pid=1 run\n", "'run' is not a name=value field"),
        ("pid=1 run=\n", "'run=' is not a name=value field"),
    ],
)
def test_a_malformed_record_names_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(MalformedRecord) as raised:
        parse(text)
    assert str(raised.value) == reason


def test_blank_lines_around_the_record_are_tolerated() -> None:
    assert parse("\n  pid=9 run=z  \n\n") == LaunchRecord(9, "z")


def test_only_run_suffixed_names_are_records() -> None:
    assert key_of("build.run") == "build"
    assert key_of(".run") is None
    assert key_of("build.run.tmp") is None
    assert key_of("notes.txt") is None
