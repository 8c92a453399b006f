"""Shared helpers of the pi and omp channel tests: captures, a seat, a replay with writers."""

from __future__ import annotations

import json
from pathlib import Path

from support import make_seat, record  # noqa: F401 (the channel tests import them from here)
from st2.drivers.channel.frames import Consumer
from st2.records import harness_context, harness_state

REPO = Path(__file__).resolve().parents[3]
CAPTURES = REPO / "captures"


def capture_lines(harness: str, version: str, relative: str) -> list:
    path = CAPTURES / harness / version / relative
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def capture_bytes(harness: str, version: str, relative: str) -> bytes:
    return (CAPTURES / harness / version / relative).read_bytes()


class Session:
    """A claimed session over ``seat`` with the consumer a wrapper would hold."""

    def __init__(self, seat, harness: str, clock) -> None:
        self.seat = seat
        self.diagnostics: list[str] = []
        token = harness_state.session_token()
        seq = harness_state.claim(seat.directory, seat.agent, harness, token, clock)
        self.state = harness_state.Writer(seat.directory, seat.agent, harness, clock, pty_session=seat.agent,
                                          incarnation=token, claimed_seq=seq)
        self.context = harness_context.Writer(seat.directory, seat.agent, harness, token, clock)
        self.consumer = Consumer(self.context, self.state, self.diagnostics.append)

    def feed(self, data: bytes) -> list[list[str]]:
        return self.consumer.feed(data)
