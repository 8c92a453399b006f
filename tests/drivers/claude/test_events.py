"""The hook-event mapping: every rule fires on its event and stays silent elsewhere."""

from __future__ import annotations

import pytest
from support_claude import CAPTURES, capture, capture_lines

from st2.drivers.claude import events
from st2.drivers.claude.events import Compaction, Observation


@pytest.mark.parametrize("event, payload, expected", [
    ("SessionStart", {"source": "startup"}, Observation("idle", reason="sessionStart")),
    ("SessionStart", {"source": "resume"}, Observation("idle", reason="sessionStart")),
    ("SessionStart", {"source": "compact"}, None),
    ("UserPromptSubmit", {}, Observation("active")),
    ("PreToolUse", {"tool_name": "Bash"}, Observation("active")),
    ("PostToolUse", {"tool_name": "Bash"}, Observation("active")),
    ("PermissionRequest", {"tool_name": "Bash"}, Observation("active", "human", ask="permission", reason="permissionRequest")),
    ("PermissionRequest", {"tool_name": "AskUserQuestion"}, Observation("active", "human", ask="question", reason="permissionRequest")),
    ("Notification", {"notification_type": "permission_prompt"}, None),
    ("Stop", {}, Observation("idle")),
    ("StopFailure", {"error": "rate_limit"}, Observation("idle", reason="stopFailure rate_limit")),
    ("StopFailure", {"error": "bad word; rm"}, Observation("idle", reason="stopFailure")),
    ("SubagentStop", {}, None),
    ("PreCompact", {"trigger": "manual"}, None),
    ("PostToolBatch", {}, None),
    ("MessageDisplay", {}, None),
    ("SessionEnd", {"reason": "prompt_input_exit"}, None),
])
def test_each_event_maps_to_its_observation(event, payload, expected) -> None:
    assert events.observation(event, payload) == expected


@pytest.mark.parametrize("event", ["Stop", "UserPromptSubmit", "PermissionRequest", "PostToolUse", "PreToolUse", "SessionStart"])
def test_an_event_carrying_agent_id_never_moves_top_level_state(event) -> None:
    assert events.observation(event, {"agent_id": "ac6b9feb6b29f5c39", "agent_type": ""}) is None
    # The non-firing twin: an empty agent_id is the top-level shape.
    assert events.observation(event, {"agent_id": ""}) is not None


def test_the_captured_phantom_subagent_stop_is_nested() -> None:
    phantom = capture("2.1.328/hooks/26-SubagentStop.json")
    assert phantom["agent_type"] == "" and phantom["agent_id"]
    assert events.is_nested(phantom)
    assert not events.is_nested(capture("2.1.328/hooks/24-Stop.json"))


def test_the_captured_permission_request_blocks_on_a_human() -> None:
    for relative in ("2.1.328/hooks/18-PermissionRequest.json", "docs-2.1.239/hook-inputs/PermissionRequest.input.json"):
        payload = capture(relative)
        assert "tool_use_id" not in payload  # the entry edge carries no call identity
        assert events.observation("PermissionRequest", payload) == Observation(
            "active", "human", ask="permission", reason="permissionRequest")


def test_compaction_edges() -> None:
    assert events.compaction("PreCompact", capture("2.1.328/hooks/25-PreCompact.json")) == Compaction("pre", "manual")
    assert events.compaction("PostCompact", capture("2.1.328/hooks/28-PostCompact.json")) == Compaction("post", "manual")
    assert events.compaction("PreCompact", {"trigger": "auto"}) == Compaction("pre", "auto")
    assert events.compaction("PreCompact", {"trigger": "sideways"}) == Compaction("pre", "unknown")
    # Inert: SessionStart source=compact, any other event, and a nested compaction.
    assert events.compaction("SessionStart", capture("2.1.328/hooks/27-SessionStart.json")) is None
    assert events.compaction("Stop", {}) is None
    assert events.compaction("PreCompact", {"trigger": "auto", "agent_id": "sub"}) is None


# -- the batched-tool capture (docs/drivers.md §Hook events: the blocked-exit rule pinned to what it shows) ---------

BATCH = "2.1.197/batched-tool"


def blocked_trace(relative: str) -> list[tuple[str, str | None, str]]:
    """Replay a captured hook sequence as the hook writer applies it (each observation replaces the
    last): ``(event, the call's command, "state/blockedOn" after the event)``."""
    current, trace = "unknown/unknown", []
    for line in capture_lines(relative):
        payload = line["payload"]
        observed = events.observation(line["label"], payload)
        if observed is not None:
            current = f"{observed.state}/{observed.blocked_on}"
        trace.append((line["label"], (payload.get("tool_input") or {}).get("command"), current))
    return trace


ASKS, ALLOWED = "touch batch-asks.txt", "echo batch-allowed"


@pytest.mark.parametrize("order, expected", [
    ("allowed-first-approved", [
        ("SessionStart", None, "idle/none"), ("UserPromptSubmit", None, "active/none"),
        ("PreToolUse", ALLOWED, "active/none"), ("PostToolUse", ALLOWED, "active/none"),
        ("PreToolUse", ASKS, "active/none"), ("PermissionRequest", ASKS, "active/human"),
        ("PostToolUse", ASKS, "active/none"), ("Stop", None, "idle/none")]),
    ("asking-first-approved", [
        ("SessionStart", None, "idle/none"), ("UserPromptSubmit", None, "active/none"),
        ("PreToolUse", ASKS, "active/none"), ("PermissionRequest", ASKS, "active/human"),
        ("PostToolUse", ASKS, "active/none"),
        ("PreToolUse", ALLOWED, "active/none"), ("PostToolUse", ALLOWED, "active/none"), ("Stop", None, "idle/none")]),
])
def test_a_batched_turn_serializes_around_the_open_prompt_and_the_granted_calls_post_tool_use_exits(order, expected):
    # Claude Code 2.1.197, two Bash calls in one assistant turn: the asking call's PreToolUse
    # precedes its PermissionRequest, no hook of the other call runs while the prompt is open
    # (the allowed call shows "Waiting…" on the prompt's screen when it comes second), and the
    # event after the ask is the granted call's own PostToolUse, which exits blocked.
    assert blocked_trace(f"{BATCH}/{order}.hooks.jsonl") == expected
    screen = (CAPTURES / BATCH / f"{order}.prompt-screen.txt").read_text()
    assert "Do you want to proceed?" in screen
    if order.startswith("asking-first"):
        assert screen.count("Waiting…") == 2            # neither call has run while it asks


def test_a_denied_batched_call_interrupts_the_batch_with_no_further_hook():
    # Answering No interrupts every call of the batch and ends the turn without a Stop, a
    # PostToolUse or a PermissionDenied: blocked stands until the next prompt (the stated limit).
    assert blocked_trace(f"{BATCH}/asking-first-denied.hooks.jsonl") == [
        ("SessionStart", None, "idle/none"), ("UserPromptSubmit", None, "active/none"),
        ("PreToolUse", ASKS, "active/none"), ("PermissionRequest", ASKS, "active/human")]
    assert (CAPTURES / BATCH / "asking-first-denied.final-screen.txt").read_text().count("Interrupted") == 2
    assert events.observation("UserPromptSubmit", {}) == Observation("active")
