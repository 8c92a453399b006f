"""Tracked workspaces fail closed: every render operation is simulated first, and a real change
to any Git-tracked target refuses the whole pass before anything is written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from st2.declarations import load_agent
from st2.supervisor.lowering import lower
from st2.supervisor.materialize import MaterializationRefused, materialize


def git(workspace: Path, *arguments: str) -> None:
    subprocess.run(["git", "-C", str(workspace), *arguments], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(workspace)})


def plan_for(tmp_path: Path, workspace: Path, render: str):
    seat = tmp_path / "c" / "agents" / "h" / "w"
    seat.mkdir(parents=True)
    (seat / "hooks.json").write_text('{"hook": true}\n')
    (seat / "agent.kdl").write_text(
        f'agent "w" {{\n    workspace "{workspace}"\n    argv "sh"\n    render {{\n{render}\n    }}\n}}\n')
    declaration, diagnostics = load_agent(seat / "agent.kdl")
    assert declaration is not None, diagnostics
    return lower(declaration, "h", tmp_path / "c")


RENDER = '''        copy "hooks.json" ".st2/hooks.json"
        json-upsert ".claude/settings.local.json" arrays="union" #"{"permissions": {"allow": ["Bash(st2:*)"]}}"#
        ensure-line ".gitignore" ".st2/"
        git-exclude ".claude/"'''


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    git(workspace, "init", "-q")
    return workspace


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes()
            for path in sorted(directory.rglob("*")) if path.is_file()}


@pytest.mark.process
@pytest.mark.parametrize("tracked", [".gitignore", ".claude/settings.local.json", ".st2/hooks.json"])
def test_every_content_directive_refuses_to_change_a_tracked_target_before_any_write(tmp_path, repository, tracked):
    target = repository / tracked
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text('{"other": 1}\n' if tracked.endswith(".json") else "node_modules/\n")
    git(repository, "add", tracked)
    git(repository, "commit", "-qm", "tracked")
    before = snapshot(repository)
    with pytest.raises(MaterializationRefused) as refused:
        materialize(plan_for(tmp_path, repository, RENDER))
    assert str(target) in str(refused.value)
    assert snapshot(repository) == before              # nothing at all was written


@pytest.mark.process
def test_byte_identical_tracked_target_is_allowed_without_modification(tmp_path, repository):
    (repository / ".gitignore").write_text(".st2/\n")
    git(repository, "add", ".gitignore")
    git(repository, "commit", "-qm", "tracked")
    written = materialize(plan_for(tmp_path, repository, '        ensure-line ".gitignore" ".st2/"'))
    assert written == []
    assert (repository / ".gitignore").read_text() == ".st2/\n"


@pytest.mark.process
def test_untracked_and_non_git_targets_remain_materializable(tmp_path, repository):
    plain = tmp_path / "plain"
    plain.mkdir()
    for workspace in (repository, plain):
        (workspace / ".claude").mkdir()
        (workspace / ".claude" / "settings.local.json").write_text('{"permissions": {"allow": ["Read"]}}')
        written = materialize(plan_for(tmp_path / workspace.name, workspace, RENDER))
        assert {path.relative_to(workspace).as_posix() for path in written} >= {
            ".st2/hooks.json", ".claude/settings.local.json", ".gitignore"}
        settings = json.loads((workspace / ".claude" / "settings.local.json").read_text())
        assert settings == {"permissions": {"allow": ["Read", "Bash(st2:*)"]}}     # arrays union
        assert (workspace / ".gitignore").read_text() == ".st2/\n"
        assert (workspace / ".st2" / "hooks.json").read_text() == '{"hook": true}\n'
        # A second pass finds everything in place and writes nothing.
        assert materialize(plan_for(tmp_path / (workspace.name + "2"), workspace, RENDER)) == []
    assert ".claude/" in (repository / ".git" / "info" / "exclude").read_text().splitlines()


@pytest.mark.process
def test_a_render_target_outside_the_workspace_is_refused(tmp_path, repository):
    with pytest.raises(MaterializationRefused):
        materialize(plan_for(tmp_path, repository, '        ensure-line "../escape" "x"'))
    assert not (tmp_path / "escape").exists()


@pytest.mark.process
def test_materialize_only_refuses_a_tracked_change_and_launches_nothing(fleet, repository):
    (repository / ".gitignore").write_text("build/\n")
    git(repository, "add", ".gitignore")
    git(repository, "commit", "-qm", "tracked")
    fleet.seat("w", f'    workspace "{repository}"\n    argv "sleep" "600"\n'
               '    render {\n        ensure-line ".gitignore" ".st2/"\n    }')
    result = fleet.st2("up", "--materialize-only")
    assert result.returncode == 1
    assert "Git-tracked" in result.stderr
    assert (repository / ".gitignore").read_text() == "build/\n"
    assert fleet.running() == {}
    # With the change refused, `st2 up --once` holds the seat rather than launch it unconfigured.
    assert fleet.st2("up", "--once").returncode == 1
    assert fleet.running() == {}
