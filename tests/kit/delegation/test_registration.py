"""The README's hook registration snippet is the shipped file, and every command it registers
is a hot-path entry of the real entry point."""

from __future__ import annotations

import json
import re
from pathlib import Path

from st2.entry import HOT_PATHS

REPO = Path(__file__).resolve().parents[3]


def test_the_readme_snippet_is_the_shipped_registration() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Harness hooks", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, re.S).group(1)
    shipped = (REPO / "hooks" / "claude-settings.delegation.json").read_text()
    assert block == shipped
    settings = json.loads(shipped)["hooks"]
    assert list(settings) == ["SubagentStop", "PreToolUse"]
    assert "matcher" not in settings["SubagentStop"][0]
    assert settings["PreToolUse"][0]["matcher"] == "Agent"


def test_every_registered_command_is_a_hot_path() -> None:
    settings = json.loads((REPO / "hooks" / "claude-settings.delegation.json").read_text())["hooks"]
    commands = [hook["command"] for entries in settings.values() for entry in entries for hook in entry["hooks"]]
    assert commands == ["st2 hook subagent-stop-liveness", "st2 hook dispatch-guard"]
    for command in commands:
        words = command.split()
        assert words[0] == "st2" and tuple(words[1:3]) in HOT_PATHS
