"""`st2 driver pi replay` / `omp replay` through the real CLI: a captured channel into a seat,
one JSON line per input line, malformed lines reported and written nowhere."""

from __future__ import annotations

import json

import pytest
from support import run_st2
from support_channel import CAPTURES, make_seat, record

pytestmark = pytest.mark.process


def test_replaying_the_omp_capture_publishes_omps_prompt_figure(catalog) -> None:
    seat = make_seat(catalog)
    result = run_st2("driver", "omp", "replay", str(CAPTURES / "omp" / "18.2.3" / "channel" / "frames.jsonl"),
                     "--identity", "host.worker", catalog=catalog)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows[0] == {"line": 1, "kind": "context", "event": "session_start", "written": ["harness-context"]}
    assert [row["kind"] for row in rows].count("context") == 5 and "malformed" not in [row["kind"] for row in rows]
    context = record(seat, "harness-context")
    assert (context["harness"], context["usedTokens"], context["compactions"]) == ("omp", 11400, 1)
    assert record(seat, "harness-state")["state"] == "idle"


def test_a_malformed_line_is_reported_and_writes_nothing(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    capture = tmp_path / "frames.jsonl"
    capture.write_bytes((CAPTURES / "pi" / "0.73.1" / "channel" / "frames.jsonl").read_bytes().splitlines(True)[0]
                        + b'{"type":"context","tokens":5,"compaction":null}\n')
    result = run_st2("driver", "pi", "replay", str(capture), "--identity", "host.worker", catalog=catalog)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == '{"line":2,"kind":"malformed","event":null,"written":[]}'
    assert result.stderr == "st2 driver pi replay: malformed frame dropped: a context frame carries reading and compaction\n"
    assert record(seat, "harness-context")["usedTokens"] == 0


def test_an_unknown_seat_is_one_line_and_exit_2(catalog, tmp_path) -> None:
    capture = tmp_path / "frames.jsonl"
    capture.write_text("")
    result = run_st2("driver", "pi", "replay", str(capture), "--identity", "host.nobody", catalog=catalog)
    assert result.returncode == 2
    assert result.stderr.startswith("st2 driver pi replay: no seat 'host.nobody'") and result.stderr.count("\n") == 1
