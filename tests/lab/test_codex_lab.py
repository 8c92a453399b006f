"""Codex app-server against the fake model (Responses wire).

Pinned facts (docs/lab.md §Codex, 0.171.0): ``thread/tokenUsage/updated`` ``last`` is the
latest request (totalTokens = input + output, cached tokens inside input), ``total`` accumulates
the requests of the thread, ``modelContextWindow`` is 95 % of a configured
``model_context_window``; ``account/rateLimits/updated`` comes from the ``x-codex-*`` headers.
"""

from __future__ import annotations

import pytest

from lab_config import configure_codex
from lab_drivers import CodexAppServer
from lab_support import measured_builds, require_harness
from support import compact

pytestmark = pytest.mark.lab
BUILDS = [None, *measured_builds("codex")]  # the pin, then each measured build (its own test id)


def token_usages(frames: list[dict]) -> list[dict]:
    return [frame["params"]["tokenUsage"] for frame in frames if frame.get("method") == "thread/tokenUsage/updated"]


@pytest.mark.parametrize("build", BUILDS, ids=lambda build: build or "pin")
def test_token_usage_last_is_input_plus_output_and_window_is_95_percent(lab, fake_model, build) -> None:
    """Every number the Codex context producer reads (``last.totalTokens``, ``total.totalTokens``,
    ``modelContextWindow``) and the rate-limit windows it joins by duration, on the pin and on
    each measured build (the same numbers as its capture, captures/codex/<build>/lab/)."""
    harness = require_harness("codex", build)
    env = configure_codex(lab, harness, fake_model, context_window=200000)
    server = CodexAppServer(harness.executable, lab, env)
    try:
        server.start_thread(lab)
        first = token_usages(server.turn("hi"))
        fake_model.set_usage(input=20000, output=100, cache_read=5000, reasoning=30)
        second = token_usages(server.turn("again"))
        limits = [frame["params"]["rateLimits"] for frame in server.received()
                  if frame.get("method") == "account/rateLimits/updated"]
    finally:
        server.close()
    assert compact(first[-1]) == (
        '{"total":{"totalTokens":9942,"inputTokens":9900,"cachedInputTokens":1200,"cacheWriteInputTokens":0,'
        '"outputTokens":42,"reasoningOutputTokens":0},"last":{"totalTokens":9942,"inputTokens":9900,'
        '"cachedInputTokens":1200,"cacheWriteInputTokens":0,"outputTokens":42,"reasoningOutputTokens":0},'
        '"modelContextWindow":190000}')
    # Usage changed between turns: `last` follows the fake, `total` accumulates.
    assert compact(second[-1]) == (
        '{"total":{"totalTokens":30042,"inputTokens":29900,"cachedInputTokens":6200,"cacheWriteInputTokens":0,'
        '"outputTokens":142,"reasoningOutputTokens":30},"last":{"totalTokens":20100,"inputTokens":20000,'
        '"cachedInputTokens":5000,"cacheWriteInputTokens":0,"outputTokens":100,"reasoningOutputTokens":30},'
        '"modelContextWindow":190000}')
    primary, secondary = limits[-1]["primary"], limits[-1]["secondary"]
    assert (primary["usedPercent"], primary["windowDurationMins"]) == (13, 300)
    assert (secondary["usedPercent"], secondary["windowDurationMins"]) == (34, 10080)
    assert secondary["resetsAt"] - primary["resetsAt"] == 86400 - 3600


def test_a_tool_marker_runs_a_command_execution_item(lab, fake_model) -> None:
    harness = require_harness("codex")
    env = configure_codex(lab, harness, fake_model)
    server = CodexAppServer(harness.executable, lab, env)
    try:
        server.start_thread(lab)
        frames = server.turn("FAKE_TOOL: echo codex-tool-ok")
    finally:
        server.close()
    items = [frame["params"]["item"] for frame in frames if frame.get("method") == "item/completed"]
    command = next(item for item in items if item["type"] == "commandExecution")
    assert (command["aggregatedOutput"], command["exitCode"], command["status"]) == ("codex-tool-ok\n", 0, "completed")
    window = token_usages(frames)[-1]["modelContextWindow"]
    assert window == 258400  # the default when no model_context_window is configured
    answered = [entry["summary"]["last_is_tool_result"] for entry in fake_model.model_requests()
                if entry["wire"] == "responses"]
    assert answered[-2:] == [False, True]
