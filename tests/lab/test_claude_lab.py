"""Claude Code against the fake model: print mode, and the status line of the interactive TUI.

Pinned facts (docs/lab.md §Claude Code, 2.1.197): ``--model claude-sonnet-4-5`` reports
``context_window_size`` 200000; ``total_input_tokens`` is input + cache creation + cache read of
the latest request; ``used_percentage`` is rounded (100500/200000 -> 50, not 50.25).
"""

from __future__ import annotations

import json

import pytest

from lab_support import measured_builds, require_harness
from lab_config import configure_claude
from lab_drivers import ClaudeTui, claude_print
from support import compact

pytestmark = pytest.mark.lab
BUILDS = [None, *measured_builds("claude-code")]  # the pin, then each measured build (its own test id)


def test_print_mode_completes_a_turn_with_the_fake_usage(lab, fake_model) -> None:
    harness = require_harness("claude-code")
    env = configure_claude(lab, harness, fake_model, hooks=False)
    events = claude_print(harness.executable, lab, env, "hi", "--model", "claude-sonnet-4-5", timeout=120)
    result = events[-1]
    assert (result["type"], result["subtype"], result["result"]) == ("result", "success", "Hello from the fake model.")
    assert compact({key: result["usage"][key] for key in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")}) == (
        '{"input_tokens":9900,"cache_creation_input_tokens":300,"cache_read_input_tokens":1200,"output_tokens":42}')
    paths = [(entry["method"], entry["path"]) for entry in fake_model.requests]
    assert ("HEAD", "/") in paths
    assert ("POST", "/v1/messages?beta=true") in paths
    assert all(entry["headers"].get("x-api-key") == "dummy" for entry in fake_model.model_requests())


@pytest.mark.parametrize("build", BUILDS, ids=lambda build: build or "pin")
def test_status_line_reports_sonnet_window_200000_and_rounds_100500_to_50(lab, fake_model, build) -> None:
    """The status-line numbers the Claude context producer reads, on the pin and on each measured
    build (the same numbers as its capture, captures/claude-code/<build>/statusline/)."""
    harness = require_harness("claude-code", build)
    env = configure_claude(lab, harness, fake_model, hooks=False)
    # 99000 + 300 + 1200 = 100500 of 200000 = 50.25 %
    fake_model.set_usage(input=99000, cache_creation=300, cache_read=1200, output=42)
    tui = ClaudeTui(harness.executable, lab, env, "--model", "claude-sonnet-4-5")
    try:
        first = tui.wait_status(lambda line: True, 90, "at start-up")
        assert compact(first["context_window"]) == (
            '{"total_input_tokens":0,"total_output_tokens":0,"context_window_size":200000,'
            '"current_usage":null,"used_percentage":null,"remaining_percentage":null}')
        tui.type("hi")
        line = tui.wait_status(lambda line: line["context_window"]["current_usage"] is not None, 90,
                               "after the first reply")
    finally:
        tui.close()
    assert compact(line["context_window"]) == (
        '{"total_input_tokens":100500,"total_output_tokens":42,"context_window_size":200000,'
        '"current_usage":{"input_tokens":99000,"output_tokens":42,"cache_creation_input_tokens":300,'
        '"cache_read_input_tokens":1200},"used_percentage":50,"remaining_percentage":50}')
    assert line["model"]["id"] == "claude-sonnet-4-5"
    assert line["version"] == harness.version
    assert "rate_limits" not in line  # an API key session has no subscription windows


def test_a_subagent_marker_dispatches_an_agent_seen_by_the_subagent_hooks(lab, fake_model) -> None:
    harness = require_harness("claude-code")
    env = configure_claude(lab, harness, fake_model)
    events = claude_print(harness.executable, lab, env, "FAKE_SUBAGENT do it", "--model", "claude-sonnet-4-5",
                          timeout=120)
    assert events[-1]["result"] == "Hello from the fake model."
    hooks = [json.loads(line) for line in (lab.logs / "hooks.jsonl").read_text().splitlines()]
    labels = [hook["label"] for hook in hooks]
    assert labels == ["SessionStart", "UserPromptSubmit", "PreToolUse", "SubagentStart", "SubagentStop",
                      "PostToolUse", "Stop", "SessionEnd"]
    start, stop = hooks[3]["payload"], hooks[4]["payload"]
    assert (start["agent_type"], stop["agent_type"]) == ("general-purpose", "general-purpose")
    assert start["agent_id"] == stop["agent_id"]
    # The sub-agent's own request carried the fake's sub-agent prompt, not the marker.
    assert any(entry["summary"]["last_user_text"].endswith("Say hello.") for entry in fake_model.model_requests())
