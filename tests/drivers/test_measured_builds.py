"""The measured builds beside each lab pin (tests/lab/harnesses.toml ``measured``; docs/drivers.md
§Measured builds): each one's capture, made from the real registry build against the fake model,
pins the numbers its driver publishes — replayed through the same producers and state
observation as the pin's capture, it yields the pin's records row for row, with the build
asserted literally and the wrong numbers beside the right ones — and each gate admits exactly the
builds so measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2 import drivers
from st2.base.clock import FakeClock
from st2.drivers.seat import Seat

CAPTURES = Path(__file__).parents[2] / "captures"
KEYS = ("record", "state", "blockedOn", "ask", "usedTokens", "windowTokens", "usedPercent", "model", "costUsd",
        "sessionTotalTokens", "compactions", "lastCompactionTrigger", "rateLimits")


def replayed(replay, capture: Path, tmp_path: Path) -> list[dict]:
    """Every record write the driver's replay verb lands over ``capture``, without its stamps."""
    directory = tmp_path / capture.parents[1].name / "agents" / "h" / "x"
    directory.mkdir(parents=True)
    return [{key: row[key] for key in KEYS if key in row} for row in replay(capture, Seat(directory, "h.x"), FakeClock())]


def contexts(rows: list[dict]) -> list[tuple]:
    return [(row["usedTokens"], row["windowTokens"], row["usedPercent"], row["sessionTotalTokens"], row["compactions"])
            for row in rows if row["record"] == "harness-context"]


def test_each_exact_gate_admits_exactly_its_measured_builds() -> None:
    assert {harness: (drivers.package(harness).VERSION_GATE, drivers.package(harness).SUPPORTED_VERSIONS,
                      drivers.package(harness).MEASURED_VERSIONS) for harness in ("codex", "opencode")} == {
        "codex": ("exact", ("0.171.0",), ("0.171.0",)),  # 0.151.0 measured, refused: see below
        "opencode": ("exact", ("1.18.25", "1.18.33"), ("1.18.25", "1.18.33"))}
    assert drivers.package("claude").MEASURED_VERSIONS == ("2.1.197", "2.1.250", "2.1.328")


def test_codex_0_151_0_publishes_the_pins_context_but_its_gate_refuses_it(tmp_path: Path) -> None:
    """Measured and recorded, not admitted: 0.151.0's lab session replays to 0.171.0's records row
    for row, but under ``st2 up`` it types the fake model's HTTP 401 as ``codexErrorInfo: "other"``
    (0.171.0: ``httpConnectionFailed`` with status 401), so st2 could never publish its rejected
    credential — a difference of wire shape, and the gate keeps it out."""
    from st2.drivers import codex
    from st2.drivers.codex.diagnostics import credential_rejected
    from st2.drivers.codex.replay import frames, replay

    capture = CAPTURES / "codex" / "0.151.0" / "lab" / "app-server.harness.jsonl"
    first = json.loads(capture.read_text().splitlines()[0])
    assert first["result"]["userAgent"].startswith("st2_lab/0.151.0 ")
    rows = replayed(replay, capture, tmp_path)
    assert rows == replayed(replay, CAPTURES / "codex" / "0.171.0" / "lab" / "app-server.harness.jsonl", tmp_path)
    # The reading below the baseline (0 %), then the compaction edge carrying it; never the
    # accumulated total as occupancy.
    assert contexts(rows) == [(9942, 190000, 0.0, 9942, 0), (9942, 190000, 0.0, 9942, 1)]
    usages = [json.loads(line)["params"]["tokenUsage"] for line in capture.read_text().splitlines()
              if '"thread/tokenUsage/updated"' in line]
    assert usages[-1]["total"]["totalTokens"] > 9942 and all(used != usages[-1]["total"]["totalTokens"]
                                                            for used, *_ in contexts(rows))
    states = [(row["state"], row["blockedOn"], row["ask"]) for row in rows if row["record"] == "harness-state"]
    assert ("active", "human", "permission") in states and states[-1] == ("idle", "none", "none")

    def turn_errors(build: str) -> list:
        wire = CAPTURES / "codex" / build / "lab" / "wrapper-wire.jsonl"
        return [frame["params"]["turn"]["error"]["codexErrorInfo"] for frame in frames(wire)
                if frame.get("method") == "turn/completed" and (frame["params"]["turn"].get("error") or {})]

    assert turn_errors("0.171.0") == [{"responseTooManyFailedAttempts": {"httpStatusCode": 429}},
                                      {"httpConnectionFailed": {"httpStatusCode": 401}}]
    assert turn_errors("0.151.0") == [{"responseTooManyFailedAttempts": {"httpStatusCode": 429}}, "other"]
    assert [credential_rejected(info) for info in turn_errors("0.171.0")] == [False, True]
    assert [credential_rejected(info) for info in turn_errors("0.151.0")] == [False, False]
    assert "0.151.0" not in codex.SUPPORTED_VERSIONS + codex.MEASURED_VERSIONS


def test_opencode_1_18_25_publishes_the_pins_records(tmp_path: Path) -> None:
    from st2.drivers.opencode.replay import replay

    capture = CAPTURES / "opencode" / "1.18.25" / "lab" / "event.sse"
    versions = {json.loads(line[len("data: "):])["properties"]["info"].get("version")
                for line in capture.read_text().splitlines()
                if line.startswith("data: ") and '"session.updated"' in line}
    assert versions == {"1.18.25"}
    rows = replayed(replay, capture, tmp_path)
    assert rows == replayed(replay, CAPTURES / "opencode" / "1.18.33" / "lab" / "event.sse", tmp_path)
    # The non-summary assistant total over the providers' window, unrounded; the summarizer's own
    # message never the reading (a compaction edge carries the turn's numbers instead).
    assert contexts(rows) == [(9942, 200000, 4.971, 0, 0), (9942, 200000, 4.971, 0, 1)]
    assert [row["model"] for row in rows if row["record"] == "harness-context"] == ["fake/fake-model"] * 2
    states = [(row["state"], row["blockedOn"], row["ask"]) for row in rows if row["record"] == "harness-state"]
    assert ("active", "human", "permission") in states and states[-1] == ("idle", "none", "none")


def test_claude_2_1_250_status_line_is_claudes_own_triple() -> None:
    from st2.drivers.claude import payload

    capture = CAPTURES / "claude-code" / "2.1.250" / "statusline" / "statusline-stdin.jsonl"
    lines = [json.loads(line) for line in capture.read_text().splitlines()]
    assert {line["version"] for line in lines} == {"2.1.250"}
    readings = [payload.reading(line) for line in lines]
    assert [(r.used_tokens, r.window_tokens, r.used_percent, r.model) for r in readings] == [
        (None, 200000, None, "claude-sonnet-4-5"),       # before the first reply: withheld, not the derived 0
        (100500, 200000, 50, "claude-sonnet-4-5"),       # 99000 + 300 + 1200; Claude's 50, not 50.25
        (101300, 200000, 51, "claude-sonnet-4-5")]       # 100000 + 300 + 1000; Claude's 51, not 50.65
    assert lines[0]["context_window"]["total_input_tokens"] == 0
    usage = lines[1]["context_window"]["current_usage"]
    assert readings[1].used_tokens not in (usage["input_tokens"], usage["input_tokens"] + usage["output_tokens"])


@pytest.mark.parametrize("harness, folder", [("codex", "codex"), ("opencode", "opencode"), ("claude", "claude-code")])
def test_every_measured_build_has_its_captures_with_provenance(harness: str, folder: str) -> None:
    provenance = (CAPTURES / "PROVENANCE.md").read_text()
    for build in drivers.package(harness).MEASURED_VERSIONS:
        assert (CAPTURES / folder / build).is_dir(), (harness, build)
        assert f"{build}/" in provenance, (harness, build)


def test_claude_2_1_250_hooks_observe_the_pins_states_and_launch_a_subagent_asynchronously() -> None:
    """Where 2.1.250 differs from the pin, recorded rather than admitted silently: its Agent tool
    returns at once (``isAsync``), the sub-agent's end re-prompts the session with a
    ``<task-notification>`` turn, and the Stop between them lists the still-running sub-agent in
    ``background_tasks`` (st2 reads that Stop as idle, as on the pin). The states and compaction
    edges the hook observer derives are otherwise the pin's."""
    from st2.drivers.claude.events import compaction, observation

    def observed(build: str) -> list[tuple]:
        rows = [json.loads(line) for line in
                (CAPTURES / "claude-code" / build / "lab" / "hooks.jsonl").read_text().splitlines()]
        return [(row["label"], getattr(observation(row["label"], row["payload"]), "state", None),
                 getattr(compaction(row["label"], row["payload"]), "edge", None)) for row in rows], rows

    pin, _ = observed("2.1.197")
    seen, rows = observed("2.1.250")
    subagent = [label for label, _, _ in seen[10:20]]
    assert subagent == ["SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "PostToolUse",
                        "SubagentStop", "Stop", "UserPromptSubmit", "Stop", "SessionEnd"]
    assert rows[14]["payload"]["tool_response"]["isAsync"] is True
    assert rows[16]["payload"]["background_tasks"][0]["status"] == "running"
    assert rows[17]["payload"]["prompt"].startswith("<task-notification>")
    # Without the sub-agent step (its own session on each build), every state and edge is the pin's.
    assert seen[:10] + seen[20:] == pin[:10] + pin[18:]
