"""st2's Codex usedPercent against the real TUI's own "% context left" (docs/drivers.md §Codex), on
0.171.0 (the lab's pin, the gate's build) and on 0.151.0 (measured beside it, not admitted:
docs/drivers.md §Measured builds).

Each screen in ``captures/codex/<build>/context-left/`` was captured after one turn whose usage
the fake model scripted above the 12,000-token baseline (``tests/ding/capture_codex_screens.py
--context-left``); ``token_count.jsonl`` holds the TUI's own token usage for the same turns. The
published percent must equal 100 − the footer's "% left" (and its "% used"), and every wrong
formula the same numbers admit must disagree with at least one screen.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from st2.drivers.codex.context import BASELINE_TOKENS, ContextProducer, used_percent

CAPTURES = Path(__file__).parents[3] / "captures" / "codex"
BUILDS = ("0.171.0", "0.151.0")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FOOTER = re.compile(r"Context (\d+)% left · Context (\d+)% used")


def turns(screens: Path) -> list[dict]:
    return json.loads((screens / "turns.json").read_text())["turns"]


def token_counts(screens: Path) -> list[dict]:
    return [json.loads(line)["payload"]["info"] for line in (screens / "token_count.jsonl").read_text().splitlines()]


def footer(name: str, screens: Path) -> tuple[int, int]:
    """The TUI's ("% left", "% used") from the one footer line of a captured screen."""
    found = FOOTER.findall(ANSI.sub("", (screens / f"{name}.ansi").read_text()))
    assert len(found) == 1, f"{name}: {found}"
    return int(found[0][0]), int(found[0][1])


def frame(info: dict) -> dict:
    """The app-server's ``thread/tokenUsage/updated`` for one rollout ``token_count`` (the same
    TokenUsageInfo, camel-cased on that wire)."""
    def breakdown(usage: dict) -> dict:
        return {"totalTokens": usage["total_tokens"], "inputTokens": usage["input_tokens"],
                "cachedInputTokens": usage["cached_input_tokens"], "outputTokens": usage["output_tokens"],
                "reasoningOutputTokens": usage["reasoning_output_tokens"]}
    return {"method": "thread/tokenUsage/updated", "params": {"threadId": "t", "turnId": "u", "tokenUsage": {
        "total": breakdown(info["total_token_usage"]), "last": breakdown(info["last_token_usage"]),
        "modelContextWindow": info["model_context_window"]}}}


def observed(build: str) -> list[tuple[str, dict, tuple[int, int]]]:
    screens = CAPTURES / build / "context-left"
    scripted, counts = turns(screens), token_counts(screens)
    assert len(scripted) == len(counts) == 3
    return [(turn["name"], info, footer(turn["name"], screens)) for turn, info in zip(scripted, counts)]


@pytest.mark.parametrize("build", BUILDS)
def test_the_capture_is_the_build_above_the_baseline_at_95_percent_of_the_configured_window(build) -> None:
    screens = CAPTURES / build / "context-left"
    meta = json.loads((screens / "turns.json").read_text())
    assert (meta["harness"], meta["version"], meta["configuredContextWindow"]) == ("codex", build, 200_000)
    assert build in (screens / "PROVENANCE.md").read_text()
    for turn, info in zip(turns(screens), token_counts(screens)):
        assert info["last_token_usage"]["total_tokens"] == turn["lastTotalTokens"] > BASELINE_TOKENS
        assert info["model_context_window"] == 190_000  # what the TUI divides by: 95 % of 200,000


@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("index", range(3))
def test_the_published_percent_is_100_minus_the_tuis_context_left(index, build) -> None:
    name, info, (left, used_shown) = observed(build)[index]
    reading, _ = ContextProducer().on_frame(frame(info))
    assert reading.used_percent == 100 - left == used_shown, name
    assert (reading.used_tokens, reading.window_tokens) == (info["last_token_usage"]["total_tokens"], 190_000)
    assert reading.session_total_tokens == info["total_token_usage"]["total_tokens"]


@pytest.mark.parametrize("build", BUILDS)
def test_the_observed_numbers_are_pinned(build) -> None:
    assert [(name, info["last_token_usage"]["total_tokens"], shown) for name, info, shown in observed(build)] == [
        ("half-78.5", 50_270, (79, 21)), ("seed-92283", 92_283, (55, 45)), ("half-36.5", 125_030, (37, 63))]


@pytest.mark.parametrize("build", BUILDS)
def test_the_wrong_formulas_disagree_with_the_tui(build) -> None:
    rows = observed(build)
    for name, info, (left, _) in rows:
        window, last = info["model_context_window"], info["last_token_usage"]
        truth = 100 - left
        assert round(last["total_tokens"] / window * 100) != truth, name                      # no baseline
        assert round(info["total_token_usage"]["total_tokens"] / window * 100) != truth, name  # total ≠ occupancy
        assert round(last["input_tokens"] / window * 100) != truth, name                      # inputTokens alone
        assert used_percent(200_000, last["total_tokens"]) != truth, name                     # the configured window
    # Python's half-to-even round in the mirror: wrong exactly at the two exact-half screens.
    def python_rounded(window: int, last_total: int) -> int:
        effective = window - BASELINE_TOKENS
        return 100 - round((effective - (last_total - BASELINE_TOKENS)) / effective * 100)
    wrong = [name for name, info, (left, _) in rows
             if python_rounded(info["model_context_window"], info["last_token_usage"]["total_tokens"]) != 100 - left]
    assert wrong == ["half-78.5", "half-36.5"]
