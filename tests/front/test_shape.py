"""The one argv-shape parser (st2/front/__init__.py) over the shapes of the front door's table:
each row accepts exactly its launched or common shape and refuses every other spelling with one
line, which the door takes as "let click handle it"."""

from __future__ import annotations

import pytest

from st2.front import ShapeRefusal, parse, parse_kit
from st2.front.table import ROOT, ROUTES

DING = ROUTES[("ding",)].shape
SEND = ROUTES[("message", "send")].shape


def reading(words: list[str], shape) -> tuple | None:
    try:
        parsed = parse(words, shape)
    except ShapeRefusal:
        return None
    return parsed.values, parsed.flags, parsed.positionals, parsed.tail


def test_the_launched_ding_shape_parses() -> None:
    assert reading(["h.ann", "--socket", "s", "--poll-interval", "0.2", "--trace-progress"], DING) == (
        {"--socket": "s", "--poll-interval": "0.2"}, {"--trace-progress"}, ["h.ann"], None)
    assert reading(["h.ann"], DING) == ({}, set(), ["h.ann"], None)


@pytest.mark.parametrize("words", [
    [],                                              # no runtime id
    ["--socket", "s", "h.ann"],                      # the runtime id not first
    ["h.ann", "h.bob"],                              # a second positional
    ["h.ann", "--socket=s"],                         # another spelling
    ["h.ann", "--poll-interval", "1e3"],             # not a plain decimal
    ["h.ann", "--poll-interval", "-1"],              # a value like an option
    ["h.ann", "--trace-progress", "--trace-progress"],   # a repeat
    ["h.ann", "--identity", "ann"],                  # an option the launched shape never uses
    ["h.ann", "--socket"],                           # no value
    ["h.ann", "--help"],
])
def test_every_other_ding_spelling_is_refused(words) -> None:
    assert reading(words, DING) is None


def test_send_takes_its_options_in_both_spellings_and_its_alias() -> None:
    assert reading(["h.bob", "-m", "hi", "--subject=s", "--json"], SEND) == (
        {"--message": "hi", "--subject": "s"}, {"--json"}, ["h.bob"], None)
    for words in (["-m=hi"], ["--message", "hi", "-m", "again"], ["--priority", "now"], ["a", "b"], ["--"], ["-"]):
        assert reading(words, SEND) is None, words
    assert reading(["--catalog", "c"], ROOT) == ({"--catalog": "c"}, set(), [], None)


def test_the_kit_grammar_refuses_with_one_line() -> None:
    assert parse_kit(["--mode", "-x", "--", "--key", "-"], ("--budget",), ("--mode", "--key")) == (
        set(), {"--mode": "-x"}, ["--key", "-"])
    with pytest.raises(ShapeRefusal, match="^unrecognized option: --nope$"):
        parse_kit(["--nope"])
    with pytest.raises(ShapeRefusal, match="^--expect needs a value$"):
        parse_kit(["--expect"], options=("--expect",))
