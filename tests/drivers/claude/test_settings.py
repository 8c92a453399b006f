"""The `claude { … }` block: its argv, and the rendered `.claude/settings.local.json` whose merge
owns only st2's entries — through the real declaration loader, lowering and materialization."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support_claude import REPO

from st2.declarations import load_agent
from st2.drivers.claude import settings
from st2.drivers.claude.events import OBSERVED_EVENTS
from st2.supervisor.lowering import lower
from st2.supervisor.materialize import materialize

ST2 = ["/opt/st2/bin/st2"]


def seat(catalog: Path, body: str, workspace: Path | None = None) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True, exist_ok=True)
    where = f'    workspace "{workspace}"\n' if workspace else ""
    (directory / "agent.kdl").write_text(f'agent "worker" {{\n{where}{body}\n}}\n')
    return directory / "agent.kdl"


def load(path: Path):
    declaration, diagnostics = load_agent(path)
    assert declaration is not None, [str(diagnostic) for diagnostic in diagnostics]
    return declaration


def test_the_rendered_settings_are_pinned() -> None:
    observe = {event: [{"hooks": [{"type": "command", "command": f'"$ST_HOOKS/claude-observe.sh" {event}'}]}]
               for event in OBSERVED_EVENTS}
    observe["PreToolUse"].append({"matcher": "Agent", "hooks": [
        {"type": "command", "command": '"$ST_HOOKS/claude-hook.sh" budget-guard'},
        {"type": "command", "command": '"$ST_HOOKS/claude-hook.sh" dispatch-guard'}]})
    observe["SubagentStop"].append({"hooks": [
        {"type": "command", "command": '"$ST_HOOKS/claude-hook.sh" subagent-stop-liveness'}]})
    observe["PermissionRequest"].append({"hooks": [
        {"type": "command", "command": '"$ST_HOOKS/claude-permission.sh"', "timeout": 1800}]})
    assert settings.settings() == {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "hooks": observe,
        "statusLine": {"type": "command", "command": '"$ST_HOOKS/claude-statusline.sh"', "padding": 0,
                       "refreshInterval": 5},
    }
    assert list(settings.settings()["hooks"]) == [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Notification",
        "Stop", "StopFailure", "SubagentStop", "PreCompact", "PostCompact"]


def test_every_shipped_delegation_registration_is_rendered_and_budget_guard_beside_it() -> None:
    shipped = json.loads((REPO / "hooks" / "claude-settings.delegation.json").read_text())["hooks"]
    rendered = settings.settings()["hooks"]
    for event, groups in shipped.items():
        for group in groups:
            for hook in group["hooks"]:
                name = hook["command"].removeprefix("st2 hook ")
                matching = [candidate for candidate in rendered[event]
                            if candidate.get("matcher") == group.get("matcher")
                            and {"type": "command", "command": settings.hook_command(name)} in candidate["hooks"]]
                assert matching, (event, name)
    agent_group = [group for group in rendered["PreToolUse"] if group.get("matcher") == "Agent"][0]
    assert agent_group["hooks"][0]["command"] == '"$ST_HOOKS/claude-hook.sh" budget-guard'


def test_every_registered_script_ships_and_is_executable() -> None:
    text = json.dumps(settings.settings())
    for script in ("claude-observe.sh", "claude-hook.sh", "claude-statusline.sh"):
        assert script in text
        path = REPO / "hooks" / script
        assert path.is_file() and path.stat().st_mode & 0o111


def test_a_claude_block_lowers_to_the_session_wrapper_argv(catalog) -> None:
    path = seat(catalog, '    claude {\n        model "claude-sonnet-4-5"\n        permission-mode "default"\n'
                         '        args "--verbose" "--add-dir" "/tmp/x"\n    }\n    ding')
    plan = lower(load(path), "host", catalog, hooks="/hooks")
    assert plan.errors == ()
    agent = plan.agent_task
    assert agent.kind == "pty" and agent.runtime_id == "host.worker"
    assert agent.argv[-15:] == ("driver", "claude-session", "--identity", "host.worker", "--runtime-id", "host.worker",
                                "--", "claude", "--model", "claude-sonnet-4-5", "--permission-mode", "default",
                                "--verbose", "--add-dir", "/tmp/x")
    assert agent.environment["ST_HOOKS"] == "/hooks" and agent.environment["ST_AGENT"] == "host.worker"
    assert [operation.operation for operation in plan.declaration.render] == ["json-upsert", "git-exclude"]
    assert {task.name for task in plan.tasks} == {"agent", "ding"}


def test_a_bare_claude_block_runs_plain_claude(catalog) -> None:
    plan = lower(load(seat(catalog, "    claude")), "host", catalog)
    assert plan.agent_task.argv[-2:] == ("--", "claude")


@pytest.mark.parametrize("body, problem", [
    ('    argv "claude"\n    claude', "declares `claude { … }` and `argv`/`command`"),
    ('    claude {\n        modle "x"\n    }', "unknown field `modle` in `claude`"),
    ('    claude {\n        model "a" "b"\n    }', "takes exactly one non-empty string"),
    ('    claude "x"', "takes no arguments"),
])
def test_an_invalid_claude_block_refuses_the_seat(catalog, body, problem) -> None:
    plan = lower(load(seat(catalog, body)), "host", catalog)
    assert plan.tasks == () and len(plan.errors) == 1 and problem in plan.errors[0]


def test_a_seat_without_a_driver_block_is_lowered_unchanged(catalog) -> None:
    plan = lower(load(seat(catalog, '    argv "sleep" "60"')), "host", catalog)
    assert plan.errors == () and plan.agent_task.argv == ("sleep", "60") and plan.declaration.render == ()


@pytest.mark.process
def test_materialization_owns_only_st2s_entries_and_rerenders_idempotently(catalog, tmp_path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / ".claude").mkdir(parents=True)
    target = workspace / ".claude" / "settings.local.json"
    operator = {"permissions": {"allow": ["Bash(ls:*)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
                "statusLine": {"type": "command", "command": "my-renderer"}}
    target.write_text(json.dumps(operator))
    plan = lower(load(seat(catalog, "    claude", workspace)), "host", catalog)
    assert materialize(plan) == [target]
    merged = json.loads(target.read_text())
    assert merged["permissions"] == operator["permissions"]
    assert merged["hooks"]["Stop"] == [operator["hooks"]["Stop"][0],
                                       {"hooks": [{"type": "command", "command": '"$ST_HOOKS/claude-observe.sh" Stop'}]}]
    assert merged["statusLine"]["command"] == '"$ST_HOOKS/claude-statusline.sh"'  # the one slot st2 replaces
    assert set(merged["hooks"]) == set(OBSERVED_EVENTS)
    before = target.read_bytes()
    assert materialize(lower(load(seat(catalog, "    claude", workspace)), "host", catalog)) == []
    assert target.read_bytes() == before
