"""No frame the app-server can send crashes the wrapper: the captured 0.171.0 frames with their
values shuffled, retyped and truncated, fed through the session's real frame handling."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from codex_support import offline_session

from st2.drivers.codex.rpc import LineReader, Malformed

CAPTURES = Path(__file__).parents[3] / "captures" / "codex" / "0.171.0" / "lab"
FRAMES = int(os.environ.get("ST2_CODEX_FUZZ_FRAMES", "1500"))
VALUES = [None, True, 0, -1, 2**70, 1.5, "", "x", "systemError", [], [1, "a"], {}, {"type": "active"},
          {"type": "contextCompaction", "id": 3}, {"httpConnectionFailed": {"httpStatusCode": 401}}]


def mutate(value, chooser: random.Random, depth: int = 0):
    if isinstance(value, dict) and depth < 4:
        out = {}
        for key, inner in value.items():
            roll = chooser.random()
            if roll < 0.1:
                continue
            out[key] = chooser.choice(VALUES) if roll < 0.25 else mutate(inner, chooser, depth + 1)
        return out
    if isinstance(value, list) and depth < 4:
        return [mutate(inner, chooser, depth + 1) for inner in value if chooser.random() > 0.1]
    return chooser.choice(VALUES) if chooser.random() < 0.2 else value


def test_mutated_frames_never_raise_and_every_server_request_is_answered(catalog, tmp_path, capsys) -> None:
    session = offline_session(catalog, tmp_path)
    from st2.drivers.codex.replay import frames as wire_frames

    seeds = [json.loads(line) for line in (CAPTURES / "app-server.harness.jsonl").read_text().splitlines() if line.strip()]
    seeds += list(wire_frames(CAPTURES / "wrapper-wire.jsonl"))
    chooser = random.Random(int(os.environ.get("ST2_CODEX_FUZZ_SEED", "16")))
    requests = 0
    for _ in range(FRAMES):
        frame = mutate(chooser.choice(seeds), chooser)
        if not isinstance(frame, dict):
            continue
        if isinstance(frame.get("method"), str) and "id" in frame:  # a server request: it must be answered
            requests += 1
            frame["id"] = requests + 1000  # a fresh id the answer can be matched on
        session.on_frame(frame)
        session.deliver()
    answered = {entry[1] for entry in session.connection.frames if entry[0] in ("respond", "error")}
    pending = set(int(key) for key in session.desk.pending if key.isdigit())
    assert requests > 0
    for request_id in range(1001, 1001 + requests):  # answered at once, or waiting for a human
        assert request_id in answered or request_id in pending


@pytest.mark.parametrize("data", [b"{\"a\":1}\n[1,2]\n\"x\"\nnot json\n\n", b"\xff\xfe\n", b"{}" * 10 + b"\n"])
def test_the_line_reader_turns_garbage_into_malformed_frames(data: bytes) -> None:
    frames = LineReader().feed(data)
    assert all(isinstance(frame, (dict, Malformed)) for frame in frames)
