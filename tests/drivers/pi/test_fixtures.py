"""The pi producer pinned to the build it was measured on (docs/drivers.md
§Version-pinned producers): the verbatim channel capture of pi 0.73.1 (captures/pi/0.73.1/channel/,
written by hooks/pi-channel.ts inside the real pi) replayed through the consumer, asserting the
number pi means and the number it must not be read as."""

from __future__ import annotations

import json
import tomllib

from support_channel import REPO, Session, capture_bytes, capture_lines, make_seat, record

from st2.drivers import pi

VERSION = "0.73.1"
# The lab's fake usage per answer: input 9900, output 42, cacheRead 1200, cacheWrite 300.
PI_TOTAL_TOKENS = 11442      # pi's numerator: the last assistant message's totalTokens
PROMPT_ONLY = 11400          # omp's meaning of the same usage — never pi's


def replayed(catalog, clock) -> list[tuple[str, dict | None]]:
    """(event, record after the frame) for each frame of the capture, a second apart."""
    seat = make_seat(catalog)
    session = Session(seat, "pi", clock)
    trace = []
    for line in capture_bytes("pi", VERSION, "channel/frames.jsonl").splitlines(keepends=True):
        clock.advance(1)
        session.feed(line)
        trace.append((json.loads(line)["event"], record(seat, "harness-context")))
    assert session.diagnostics == []
    return trace


def test_the_pi_0_73_1_fixture_pins_total_tokens_as_the_numerator(catalog, clock) -> None:
    assert "pi 0.73.1" in (REPO / "captures" / "pi" / VERSION / "channel" / "PROVENANCE.md").read_text()
    usages = [line["usage"] for line in capture_lines("pi", VERSION, "channel/probe.jsonl")
              if line["event"] == "message_end" and line.get("role") == "assistant"]
    assert {usage["totalTokens"] for usage in usages} == {PI_TOTAL_TOKENS}
    assert {usage["input"] + usage["cacheRead"] + usage["cacheWrite"] for usage in usages} == {PROMPT_ONLY}
    final = replayed(catalog, clock)[-1][1]
    assert (final["harness"], final["usedTokens"], final["windowTokens"], final["usedPercent"]) == (
        "pi", PI_TOTAL_TOKENS, 200000, 5.721)
    assert final["usedTokens"] != PROMPT_ONLY
    assert (final["model"], final["costUsd"]) == ("fake-claude", 0.031814999999999996)


def test_every_settled_pi_frame_reads_total_tokens(catalog, clock) -> None:
    frames = capture_lines("pi", VERSION, "channel/frames.jsonl")
    settled = [frame["reading"]["tokens"] for frame in frames if frame["type"] == "context"
               and frame["event"] in ("turn_end", "agent_end") and frame["reading"]["tokens"] is not None]
    assert settled and set(settled) - {PI_TOTAL_TOKENS} <= {11446}  # a turn_end after a tool result adds pi's estimate
    assert PROMPT_ONLY not in {frame["reading"]["tokens"] for frame in frames if frame["type"] == "context"}


def test_a_pi_compaction_withholds_the_reading_it_emptied_in_the_same_write(catalog, clock) -> None:
    trace = replayed(catalog, clock)
    index = next(number for number, (event, _) in enumerate(trace) if event == "session_compact")
    before, after = trace[index - 1][1], trace[index][1]
    assert (before["usedTokens"], before["compactions"]) == (PI_TOTAL_TOKENS, 0)
    # One write carries both: the edge (count from pi's own session store) and pi's nulls.
    assert (after["usedTokens"], after["usedPercent"], after["windowTokens"], after["compactions"],
            after["lastCompactionTrigger"]) == (None, None, 200000, 1, "unknown")
    assert after["writtenAtMs"] > before["writtenAtMs"]
    # The next assistant message still reads null at its message_end (its own usage already
    # populated); only turn_end reports the new occupancy. Both are forwarded honestly.
    frames = capture_lines("pi", VERSION, "channel/frames.jsonl")[index + 1:]
    readings = [(frame["event"], frame["reading"]["tokens"]) for frame in frames if frame["type"] == "context"]
    assert readings[:3] == [("message_end", None), ("message_end", None), ("turn_end", PI_TOTAL_TOKENS)]
    assert trace[-1][1]["usedTokens"] == PI_TOTAL_TOKENS


def test_the_measured_pi_release_is_the_one_the_extension_gate_pins() -> None:
    with (REPO / "tests" / "lab" / "harnesses.toml").open("rb") as manifest:
        pinned = tomllib.load(manifest)["pi"]["version"]
    assert pi.MEASURED_VERSIONS == (pinned,) == (VERSION,)
    assert (REPO / "captures" / "pi" / VERSION / "channel" / "frames.jsonl").is_file()
    # The extension smoke type-checks and runs against the lab's pinned pi, read from the same manifest.
    import importlib.util
    from importlib.machinery import SourceFileLoader

    loader = SourceFileLoader("extension_smoke", str(REPO / "checks" / "extension-smoke"))
    smoke = importlib.util.module_from_spec(importlib.util.spec_from_loader("extension_smoke", loader))
    loader.exec_module(smoke)
    assert smoke.PACKAGE_TYPES["@mariozechner/pi-coding-agent"][0] == "pi"
