"""The `pi { … }` and `omp { … }` blocks: the session-wrapper argv each lowers to, through the real
declaration loader and lowering, and the problems that refuse a seat."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.authoring.validation import validate_catalog
from st2.declarations import load_agent
from st2.supervisor.lowering import lower


def seat(catalog: Path, body: str) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "worker" {{\n{body}\n}}\n')
    return directory / "agent.kdl"


def load(path: Path):
    declaration, diagnostics = load_agent(path)
    assert declaration is not None, [str(diagnostic) for diagnostic in diagnostics]
    return declaration


@pytest.mark.parametrize("harness", ["pi", "omp"])
def test_a_block_lowers_to_its_session_wrapper_argv_with_ding_as_delivery(catalog, harness) -> None:
    path = seat(catalog, f'    {harness} {{\n        provider "fake-anthropic"\n        model "fake-claude"\n'
                         f'        args "--offline"\n        executable "/opt/{harness}/bin/{harness}"\n    }}\n    ding')
    plan = lower(load(path), "host", catalog, hooks="/hooks")
    assert plan.errors == ()
    agent = plan.agent_task
    assert agent.kind == "pty" and agent.runtime_id == "host.worker"
    assert agent.argv[-13:] == ("driver", f"{harness}-session", "--identity", "host.worker", "--runtime-id",
                                "host.worker", "--", f"/opt/{harness}/bin/{harness}", "--provider", "fake-anthropic",
                                "--model", "fake-claude", "--offline")
    assert agent.environment["ST_HOOKS"] == "/hooks"  # where the wrapper finds the extension it injects
    assert plan.declaration.render == ()  # nothing is written into the harness's own configuration
    assert {task.name for task in plan.tasks} == {"agent", "ding"}


@pytest.mark.parametrize("harness", ["pi", "omp"])
def test_a_bare_block_runs_the_plain_harness(catalog, harness) -> None:
    plan = lower(load(seat(catalog, f"    {harness}")), "host", catalog)
    assert plan.agent_task.argv[-2:] == ("--", harness)


@pytest.mark.parametrize("body, problem", [
    ('    argv "pi"\n    pi', "declares `pi { … }` and `argv`/`command`"),
    ('    pi {\n        modle "x"\n    }', "unknown field `modle` in `pi`"),
    ('    omp {\n        model "a" "b"\n    }', "`omp { model }` takes exactly one non-empty string"),
    ('    omp "x"', "`omp` takes no arguments"),
    ('    pi {\n        args\n    }', "`pi { args }` needs at least one argument"),
])
def test_an_invalid_block_refuses_the_seat(catalog, body, problem) -> None:
    plan = lower(load(seat(catalog, body)), "host", catalog)
    assert plan.tasks == () and len(plan.errors) == 1 and problem in plan.errors[0]


def test_an_invalid_block_is_reported_at_its_position_by_validate(catalog, tmp_path) -> None:
    seat(catalog, '    omp { colour "blue" }')
    diagnostics = validate_catalog(catalog, "host", state_dir=tmp_path / "s")
    assert [(d.code, d.span.line, d.span.column) for d in diagnostics] == [("driver-block-invalid", 2, 5)]
    assert "unknown field `colour` in `omp`" in diagnostics[0].message
