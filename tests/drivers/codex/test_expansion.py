"""The `codex { … }` block: the canonical PTY task's argv through the real loader and lowering;
`ding` refused on a Codex seat by lowering and validate; DING holding a seat whose driver owns
delivery."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.authoring.validation import validate_catalog
from st2.declarations import load_agent
from st2.drivers import delivery_owner, owns_delivery
from st2.drivers.codex import SUPPORTED_VERSIONS
from st2.supervisor.lowering import lower


def seat(catalog: Path, body: str, identity: str = "coder") -> Path:
    directory = catalog / "agents" / "host" / identity
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')
    return directory / "agent.kdl"


def load(path: Path):
    declaration, diagnostics = load_agent(path)
    assert declaration is not None, diagnostics
    return declaration


def test_a_codex_block_lowers_to_the_codex_session_wrapper_argv(catalog) -> None:
    path = seat(catalog, '    codex {\n        model "gpt-5.1-codex"\n        approval-policy "on-request"\n'
                         '        sandbox "workspace-write"\n        config "model_context_window=200000" "x.y=1"\n    }')
    plan = lower(load(path), "host", catalog, hooks="/hooks")
    assert plan.errors == ()
    agent = plan.agent_task
    assert agent.kind == "pty" and agent.runtime_id == "host.coder"
    assert agent.argv[agent.argv.index("driver"):] == (
        "driver", "codex-session", "--identity", "host.coder", "--runtime-id", "host.coder", "--",
        "codex", "app-server", "-c", 'model="gpt-5.1-codex"', "-c", 'approval_policy="on-request"',
        "-c", 'sandbox_mode="workspace-write"', "-c", "model_context_window=200000", "-c", "x.y=1")
    assert {task.name for task in plan.tasks} == {"agent"}  # no DING companion
    assert plan.declaration.render == ()


def test_a_bare_codex_block_runs_the_app_server(catalog) -> None:
    plan = lower(load(seat(catalog, "    codex")), "host", catalog)
    assert plan.agent_task.argv[-3:] == ("--", "codex", "app-server")


@pytest.mark.parametrize("body, problem", [
    ('    codex\n    ding', "a Codex seat is delivered by its wrapper's native pump only"),
    ('    argv "codex"\n    codex', "declares `codex { … }` and `argv`/`command`"),
    ('    codex {\n        modle "x"\n    }', "unknown field `modle` in `codex`"),
    ('    codex {\n        config "novalue"\n    }', "is not key=value"),
    ('    codex {\n        model "a" "b"\n    }', "takes exactly one non-empty string"),
])
def test_an_invalid_codex_seat_is_refused(catalog, body, problem) -> None:
    plan = lower(load(seat(catalog, body)), "host", catalog)
    assert plan.tasks == () and plan.errors and problem in plan.errors[0]


def test_validate_refuses_ding_on_a_codex_seat_at_the_block(catalog, tmp_path) -> None:
    seat(catalog, "    codex\n    ding")
    diagnostics = validate_catalog(catalog, "host", state_dir=tmp_path / "s")
    assert [(d.code, d.source, d.span.line, d.span.column) for d in diagnostics] == [
        ("driver-block-invalid", "agents/host/coder/agent.kdl", 2, 5)]
    assert "remove `ding`" in diagnostics[0].message
    seat(catalog, "    codex")
    assert validate_catalog(catalog, "host", state_dir=tmp_path / "s") == []


def test_only_a_native_driver_block_owns_delivery(catalog) -> None:
    assert owns_delivery("codex") and not owns_delivery("claude") and not owns_delivery("no such")
    assert delivery_owner(seat(catalog, "    codex", "a")) == "codex"
    assert delivery_owner(seat(catalog, "    claude", "b")) is None
    # A render-only `harness "codex"` seat is a Codex TUI typed into by DING: not owned.
    assert delivery_owner(seat(catalog, '    argv "codex"\n    ding\n    harness "codex"', "c")) is None


def test_the_version_gate_is_one_exact_constant() -> None:
    assert SUPPORTED_VERSIONS == ("0.171.0",)


@pytest.mark.process
def test_ding_holds_a_seat_whose_driver_owns_delivery(catalog, tmp_path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parents[2] / "ding"))
    from ding_support import Notifier, Standin, make_seat, poll_for, write_message

    standin = Standin(tmp_path)
    directory = make_seat(catalog, "coder", 'agent "coder" {\n    codex\n}\n')
    write_message(directory, "for the pump, not for DING")
    notifier = Notifier(catalog, "coder", standin.socket, tmp_path / "state")
    try:
        poll_for(lambda: notifier.log.exists() and "native pump; DING holds" in notifier.log.read_text(),
                 what="the hold report")
        notifier.runs_on(passes=10, what="ten holding passes")  # anything typed would show up now
        assert standin.received() == b""
    finally:
        notifier.stop()
        standin.close()
