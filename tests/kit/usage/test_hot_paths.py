"""The usage hot paths are registered in the entry point's dispatch table (their import rule is
proved for every hot path at once by tests/test_hot_paths.py)."""

from __future__ import annotations

from st2.entry import HOT_PATHS


def test_the_usage_hot_paths_are_registered():
    assert HOT_PATHS[("usage", "verdict")] == "st2.kit.usage.verdict:main"
    assert HOT_PATHS[("hook", "budget-guard")] == "st2.drivers.claude.hooks.budget_guard:main"
    assert HOT_PATHS[("usage", "poll")] == "st2.kit.usage.poll:main"
