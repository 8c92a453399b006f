"""The usage hot paths import only the standard library and their own record modules: no click,
no pydantic, no filelock, nothing of st2 beyond the usage package. Each runs through the real
entry point in a fresh interpreter, which then reports every module it loaded beyond what a bare
interpreter (same executable, same environment) loads at startup."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from st2.entry import HOT_PATHS
from support import REPO

PROBE = """
import json, sys
baseline = set(sys.modules)
from st2.entry import main
status = main(sys.argv[2:])
print(json.dumps({"status": status, "loaded": sorted(set(sys.modules) - baseline)}), file=open(sys.argv[1], "w"))
"""
ALLOWED_ST2 = {
    "st2", "st2.entry", "st2.hot_paths", "st2.knobs", "st2.usage", "st2.usage.knobs", "st2.usage.snapshot", "st2.usage.history",
    "st2.usage.verdict", "st2.usage.poll", "st2.usage.trend", "st2.drivers", "st2.drivers.claude", "st2.drivers.claude.hooks",
    "st2.drivers.claude.hooks.budget_guard",
    # the poller's atomic rewrite (standard library only, by its own contract)
    "st2.fs", "st2.fs.atomic",
    # the bounded read primitive every file reader goes through (standard library only)
    "st2.fs.read",
}
FORBIDDEN = ("click", "pydantic", "pydantic_core", "filelock", "psutil")


def loaded_by(words: list[str], tmp_path) -> tuple[int, list[str]]:
    report = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", PROBE, str(report), *words],
        cwd=REPO, env=dict(os.environ), capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    result = json.loads(report.read_text())
    return result["status"], result["loaded"]


def foreign(loaded: list[str]) -> list[str]:
    """Modules that are neither standard library nor an allowed st2 module."""
    stdlib = sys.stdlib_module_names
    return [
        name for name in loaded
        if name.split(".")[0] not in stdlib and not name.startswith("_") and name not in ALLOWED_ST2
    ]


@pytest.mark.process
@pytest.mark.parametrize(
    "words",
    [
        ["usage", "verdict"],
        ["hook", "budget-guard"],
        ["usage", "poll", "--timeout", "1"],
        ["usage", "trend"],
    ],
    ids=["usage-verdict", "hook-budget-guard", "usage-poll", "usage-trend"],
)
def test_hot_path_imports_stay_standard_library(words, usage_process, tmp_path, monkeypatch):
    usage = usage_process
    usage.snapshot(pct="40")
    usage.login(99999)
    usage.sampling()
    usage.history.write_text("updated_at=1 pct=3 resets_at=9 verdict=OK login_at=0\n")
    capture = REPO / "captures/anthropic-oauth-usage/response.charlieyou-aim.QUOTA_APIS.json"
    monkeypatch.setenv("DELEGATION_KIT_USAGE_ENDPOINT", capture.as_uri())
    status, loaded = loaded_by(words, tmp_path)
    assert status in (0, 1, 2)
    assert not [name for name in loaded if name.split(".")[0] in FORBIDDEN], loaded
    assert foreign(loaded) == []
    assert "st2.cli" not in loaded


@pytest.mark.process
def test_the_probe_sees_click_on_a_click_verb(usage_process, tmp_path):
    """The non-firing case: a verb routed through click does load click, so the probe works."""
    _, loaded = loaded_by(["usage", "--help"], tmp_path)
    assert "click" in loaded and "st2.cli" in loaded


def test_the_usage_hot_paths_are_registered():
    assert HOT_PATHS[("usage", "verdict")] == "st2.usage.verdict:main"
    assert HOT_PATHS[("hook", "budget-guard")] == "st2.drivers.claude.hooks.budget_guard:main"
    assert HOT_PATHS[("usage", "poll")] == "st2.usage.poll:main"
