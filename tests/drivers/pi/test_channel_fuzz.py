"""Consumer fuzz: channel streams of valid, corrupted and random frames, cut at random points,
never raise out of the consumer, and nothing malformed reaches a writer.

Each example is a stream of :data:`FRAMES_PER_EXAMPLE` frames. CI runs ``ST2_CHANNEL_FUZZ_FRAMES``
frames (default 1,000: 50 examples, a few seconds); the full run is
``ST2_CHANNEL_FUZZ_FRAMES=10000 pytest tests/drivers/pi/test_channel_fuzz.py`` (500 examples), with
hypothesis's derandomized seed so a failure reproduces.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support_channel import make_seat

from st2.base.clock import FakeClock
from st2.drivers.channel.frames import ASKS, BLOCKED_ON, FRAME_LIMIT, READING_KEYS, STATES, Consumer, Malformed, decode
from st2.records import harness_context

FRAMES_PER_EXAMPLE = 20
TOTAL_FRAMES = int(os.environ.get("ST2_CHANNEL_FUZZ_FRAMES", "1000"))
EXAMPLES = max(1, math.ceil(TOTAL_FRAMES / FRAMES_PER_EXAMPLE))

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                         st.text(max_size=12), st.sampled_from(["", "idle", "active", "human", "unknown", "manual"]))
json_values = st.recursive(json_scalars, lambda children: st.one_of(st.lists(children, max_size=3),
                           st.dictionaries(st.text(max_size=6), children, max_size=3)), max_leaves=6)
plausible_number = st.one_of(st.none(), st.integers(0, 10**7), st.floats(0, 1000), json_scalars)
readings = st.fixed_dictionaries({key: plausible_number for key in READING_KEYS[:3]}
                                 | {"model": st.one_of(st.none(), st.text(max_size=300)), "costUsd": plausible_number})
context_frames = st.fixed_dictionaries({
    "type": st.just("context"), "event": st.one_of(st.none(), st.text(max_size=20)),
    "reading": st.one_of(st.none(), readings, json_values),
    "compaction": st.one_of(st.none(), st.fixed_dictionaries({"trigger": st.one_of(st.text(max_size=10), json_scalars),
                                                              "count": plausible_number}), json_values),
})
state_frames = st.fixed_dictionaries({
    "type": st.just("state"), "state": st.one_of(st.sampled_from(STATES), json_scalars),
    "blockedOn": st.one_of(st.sampled_from(BLOCKED_ON), json_scalars), "ask": st.one_of(st.sampled_from(ASKS), json_scalars),
})


@st.composite
def corrupted(draw, frames):
    """A frame with keys dropped, added or retyped, sometimes flattened."""
    frame = dict(draw(frames))
    for key in draw(st.lists(st.sampled_from(sorted(frame)), max_size=2, unique=True)):
        if draw(st.booleans()):
            del frame[key]
        else:
            frame[key] = draw(json_values)
    if draw(st.booleans()) and isinstance(frame.get("reading"), dict):
        frame |= frame.pop("reading")
    return frame


def encoded(value) -> bytes:
    return json.dumps(value).encode()


lines = st.one_of(
    context_frames.map(encoded), state_frames.map(encoded), corrupted(context_frames).map(encoded),
    corrupted(state_frames).map(encoded), json_values.map(encoded),
    st.binary(max_size=64).map(lambda data: data.replace(b"\n", b" ")),
    st.integers(FRAME_LIMIT - 10, FRAME_LIMIT + 10).map(lambda size: b'{"type":"state","x":"' + b"a" * size + b'"}'),
)


class Recording:
    """Writers that check what they are handed the way the real writers would, and keep it."""

    def __init__(self) -> None:
        self.readings: list = []
        self.states: list = []

    def publish(self, reading, edge) -> bool:
        if reading is not None:
            harness_context._check_reading(reading)  # the real writer's own refusal: never raised here
        if edge is not None:
            assert edge.count is None or (isinstance(edge.count, int) and not isinstance(edge.count, bool) and edge.count >= 0)
            assert isinstance(edge.trigger, str)
        self.readings.append((reading, edge))
        return True

    def observe(self, state, blocked_on, input_buffer, ask) -> bool:
        assert state in STATES and blocked_on in BLOCKED_ON and ask in ASKS
        assert ask == "none" or blocked_on == "human"
        self.states.append((state, blocked_on, ask))
        return True


def _valid(line: bytes) -> bool:
    try:
        decode(line)
    except Malformed:
        return False
    return True


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(frames=st.lists(lines, min_size=FRAMES_PER_EXAMPLE, max_size=FRAMES_PER_EXAMPLE),
       cuts=st.lists(st.integers(0, 20000), max_size=8))
def test_no_exception_escapes_and_nothing_malformed_is_written(frames, cuts) -> None:
    writer = Recording()
    diagnostics: list[str] = []
    consumer = Consumer(writer, writer, diagnostics.append)
    stream = b"".join(frame + b"\n" for frame in frames)
    points = sorted({0, len(stream), *(cut % (len(stream) + 1) for cut in cuts)})
    for start, end in zip(points, points[1:]):
        consumer.feed(stream[start:end])
    consumer.finish()
    expected_valid = sum(1 for frame in frames if frame.strip() and _valid(frame))
    assert len(writer.readings) + len(writer.states) == consumer.applied == expected_valid
    malformed = sum(1 for frame in frames if frame.strip() and not _valid(frame))
    assert consumer.malformed == malformed == len(diagnostics)


@settings(max_examples=max(1, EXAMPLES // 10), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(frames=st.lists(st.one_of(context_frames.map(encoded), corrupted(context_frames).map(encoded), lines),
                       min_size=FRAMES_PER_EXAMPLE, max_size=FRAMES_PER_EXAMPLE))
def test_through_the_real_writers_every_landed_record_reads_back(frames) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        catalog = Path(temporary)
        (catalog / "agents").mkdir()
        seat = make_seat(catalog)
        clock = FakeClock()
        from support_channel import Session

        session = Session(seat, "pi", clock)
        for frame in frames:
            clock.advance(301)  # every valid reading is due
            session.feed(frame + b"\n")
            path = seat.directory / "harness-context"
            if path.exists():
                assert harness_context.read_file(path, clock.wall_ms()) is not None
        assert not [line for line in session.diagnostics if line.startswith("applying")]
