"""The hook-event mapping: every rule fires on its event and stays silent elsewhere."""

from __future__ import annotations

import pytest
from support_claude import capture

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
