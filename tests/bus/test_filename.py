"""The filename grammar: generated from 32 letters, read over [0-9a-z]{6}."""

from __future__ import annotations

import pytest

from st2.bus.filename import ALPHABET, is_message_filename, message_id_of, new_filename, timestamp_of


def test_generated_names_use_the_32_letter_alphabet_and_match_the_grammar() -> None:
    assert ALPHABET == "0123456789abcdefghjkmnpqrstvwxyz"
    for _ in range(200):
        name = new_filename(1_788_000_000_123)
        assert is_message_filename(name)
        assert name.startswith("1788000000123-")
        assert set(name[14:20]) <= set(ALPHABET)


def test_the_reader_accepts_the_whole_lowercase_alphanumeric_suffix() -> None:
    assert is_message_filename("1784649988123-abc23z.md")
    assert is_message_filename("1784649988123-abciou.md")  # i/o/u are never generated, still read


@pytest.mark.parametrize(
    "name",
    [
        "1784649988123-abc23z.txt",
        "123-abc23z.md",
        "1784649988123-ABC23Z.md",
        "1784649988123-abc2.md",
        "notes.md",
        ".1784649988123-abc23z.md.1.aa.tmp",
        "../1784649988123-abc23z.md",
        "1784649988123-abc23z.md\n",
    ],
)
def test_anything_else_is_not_a_message(name: str) -> None:
    assert not is_message_filename(name)


def test_timestamp_and_id_come_from_the_name() -> None:
    assert timestamp_of("1784649988123-abc23z.md") == 1784649988123
    assert timestamp_of("notes.md") == 0
    assert message_id_of("1784649988123-abc23z.md") == "abc23z"


def test_a_stamp_outside_thirteen_digits_is_refused() -> None:
    with pytest.raises(ValueError):
        new_filename(99)
