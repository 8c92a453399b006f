"""The omp producer pinned to the build it was measured on (docs/drivers.md §Version-pinned producers, docs/drivers.md §omp): which of omp
18.2.3's getContextUsage() answers is its prompt-only figure, decided over two lab captures (the
probe capture captures/omp/18.2.3/lab/ and the channel capture captures/omp/18.2.3/channel/), and
the channel capture replayed through the consumer: 11400 published, never an estimate and never
pi's totalTokens."""

from __future__ import annotations

import json

import pytest
from support_channel import REPO, Session, capture_bytes, capture_lines, make_seat, record

from st2.drivers import omp
from st2.drivers.omp.session import parse_version
from st2.drivers.version_gate import admits


def admitted(version: str | None) -> bool:
    return admits(omp.VERSION_GATE, omp.SUPPORTED_VERSIONS, version)


VERSION = "18.2.3"
PROMPT_ONLY = 11400          # omp's numerator: input + cacheRead + cacheWrite of the last assistant reply
PI_TOTAL_TOKENS = 11442      # pi's meaning of the same usage — never omp's
SEED_INPUT_ONLY = 9900       # what 18.0.9 meant (input alone) — not this build's meaning


def prompt_figure(usage: dict) -> int:
    return usage["input"] + usage["cacheRead"] + usage["cacheWrite"]


@pytest.mark.parametrize("probe", ["lab/extension_context_usage.jsonl", "channel/probe.jsonl"])
def test_only_agent_end_reads_omps_prompt_figure_every_other_event_an_estimate(probe: str) -> None:
    lines = capture_lines("omp", VERSION, probe)
    assistant = [line["usage"] for line in lines if line["event"] == "message_end" and line.get("role") == "assistant"]
    assert {prompt_figure(usage) for usage in assistant} == {PROMPT_ONLY}
    by_event: dict[str, set[int]] = {}
    for line in lines:
        by_event.setdefault(line["event"], set()).add(line["contextUsage"]["tokens"])
    assert by_event["agent_end"] == {PROMPT_ONLY}
    for event in ("session_start", "message_end", "turn_end", "session_compact"):
        assert PROMPT_ONLY not in by_event[event], event  # an estimate: never published as the prompt figure
    assert max(by_event["session_compact"]) > 15000  # after a compaction omp estimates again (15157)


def test_the_omp_18_2_3_fixture_pins_prompt_input_as_the_numerator(catalog, clock) -> None:
    assert f"omp {VERSION}" in (REPO / "captures" / "omp" / VERSION / "channel" / "PROVENANCE.md").read_text()
    frames = capture_lines("omp", VERSION, "channel/frames.jsonl")
    published = [(frame["event"], frame["reading"]["tokens"]) for frame in frames if frame["type"] == "context"]
    assert {tokens for event, tokens in published if tokens is not None} == {PROMPT_ONLY}
    assert {event for event, tokens in published if tokens is not None} == {"agent_end"}
    seat = make_seat(catalog)
    session = Session(seat, "omp", clock)
    values = []
    for line in capture_bytes("omp", VERSION, "channel/frames.jsonl").splitlines(keepends=True):
        clock.advance(1)
        session.feed(line)
        values.append(record(seat, "harness-context")["usedTokens"])
    assert session.diagnostics == []
    final = record(seat, "harness-context")
    assert (final["harness"], final["usedTokens"], final["windowTokens"], final["usedPercent"], final["compactions"]) == (
        "omp", PROMPT_ONLY, 200000, 5.7, 1)
    assert not {PI_TOTAL_TOKENS, SEED_INPUT_ONLY} & set(values)
    assert all(value is None or value == PROMPT_ONLY for value in values)


def test_an_omp_compaction_yields_unknown_because_the_event_names_no_reason(catalog, clock) -> None:
    frames = capture_lines("omp", VERSION, "channel/frames.jsonl")
    (compact,) = [frame for frame in frames if frame["event"] == "session_compact"]
    assert compact["compaction"] == {"trigger": "unknown", "count": 1}
    # omp still answers inside its session_compact handler (15157, an estimate): withheld, with the window.
    assert compact["reading"] == {"tokens": None, "contextWindow": 200000, "percent": None, "model": "fake-claude",
                                  "costUsd": 0.031814999999999996}
    seat = make_seat(catalog)
    Session(seat, "omp", clock).feed(json.dumps(compact).encode() + b"\n")
    written = record(seat, "harness-context")
    assert (written["usedTokens"], written["compactions"], written["lastCompactionTrigger"]) == (None, 1, "unknown")


def test_the_measured_context_builds_are_admitted_by_this_gate() -> None:
    assert omp.MEASURED_VERSIONS == (VERSION,)
    for build in omp.MEASURED_VERSIONS:
        assert admitted(build), build
        assert (REPO / "captures" / "omp" / build / "channel" / "frames.jsonl").is_file()


def test_the_gate_admits_a_minor_series_and_refuses_everything_else() -> None:
    assert parse_version("omp/18.2.3\n") == "18.2.3"
    assert admitted("18.2.9") and admitted("18.2.0")
    for refused in ("18.3.0", "18.0.9", "19.2.3", None):
        assert not admitted(refused)
    assert parse_version("omp (no version)") is None
    assert parse_version("omp/18.2.3.4") is None
