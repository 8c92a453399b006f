"""The channel's session frame (issue 24): the file the harness keeps the conversation in, handed
to the wrapper's callback; anything but null or an absolute path is malformed and writes nothing."""

from __future__ import annotations

import pytest

from st2.drivers.channel.frames import Consumer, Malformed, SessionFrame, decode


def test_a_session_frame_decodes_to_its_file_or_null() -> None:
    assert decode(b'{"type":"session","event":"agent_end","sessionFile":"/h/.pi/s/1.jsonl"}') == SessionFrame(
        "agent_end", "/h/.pi/s/1.jsonl")
    assert decode(b'{"type":"session","event":"session_start","sessionFile":null}') == SessionFrame(
        "session_start", None)


@pytest.mark.parametrize("line", [
    b'{"type":"session","event":"agent_end"}',
    b'{"type":"session","sessionFile":"relative.jsonl"}',
    b'{"type":"session","sessionFile":7}',
    b'{"type":"session","sessionFile":"/' + b"x" * 3000 + b'"}',
], ids=["missing", "relative", "number", "too-long"])
def test_a_malformed_session_frame_is_refused(line: bytes) -> None:
    with pytest.raises(Malformed):
        decode(line)


def test_the_consumer_hands_a_named_file_to_its_callback_and_nothing_else() -> None:
    seen: list[str] = []
    problems: list[str] = []
    consumer = Consumer(None, None, problems.append, session=lambda path: seen.append(path) or True)
    written = consumer.feed(b'{"type":"session","event":"agent_end","sessionFile":"/s/1.jsonl"}\n'
                            b'{"type":"session","event":"session_start","sessionFile":null}\n'
                            b'{"type":"session","sessionFile":"nope"}\n')
    assert (seen, written, len(problems)) == (["/s/1.jsonl"], [["resumable-session"], [], []], 1)
