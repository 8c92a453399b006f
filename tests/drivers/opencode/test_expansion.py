"""The `opencode { … }` block: the canonical PTY task's argv through the real loader and lowering;
`ding` refused; the seat's delivery owned by the driver."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations import load_agent
from st2.drivers import delivery_owner, owns_delivery
from st2.supervisor.lowering import lower


def seat(catalog: Path, body: str, identity: str = "oc") -> Path:
    directory = catalog / "agents" / "host" / identity
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')
    return directory / "agent.kdl"


def load(path: Path):
    declaration, diagnostics = load_agent(path)
    assert declaration is not None, diagnostics
    return declaration


def test_an_opencode_block_lowers_to_the_opencode_session_wrapper_argv(catalog) -> None:
    path = seat(catalog, '    opencode {\n        model "fake/fake-model"\n        operator "alice"\n    }')
    plan = lower(load(path), "host", catalog, hooks="/hooks")
    assert plan.errors == ()
    agent = plan.agent_task
    assert agent.kind == "pty" and agent.runtime_id == "host.oc"
    assert agent.argv[agent.argv.index("driver"):] == (
        "driver", "opencode-session", "--identity", "host.oc", "--runtime-id", "host.oc",
        "--model", "fake/fake-model", "--operator", "alice", "--", "opencode", "serve")
    assert {task.name for task in plan.tasks} == {"agent"}  # no DING companion
    assert "--port" not in agent.argv and "--password" not in agent.argv


@pytest.mark.parametrize("body, problem", [
    ('    opencode\n    ding', "an opencode seat is delivered by its wrapper's native pump only"),
    ('    argv "opencode"\n    opencode', "declares `opencode { … }` and `argv`/`command`"),
    ('    opencode {\n        modle "x"\n    }', "unknown field `modle` in `opencode`"),
    ('    opencode {\n        model "no-slash"\n    }', "is not providerID/modelID"),
    ('    opencode {\n        model "/m"\n    }', "is not providerID/modelID"),
    ('    opencode {\n        view "tui"\n    }', "`opencode { view }` 'tui' is not \"attach\" or \"transcript\""),
])
def test_an_invalid_opencode_seat_is_refused(catalog, body, problem) -> None:
    plan = lower(load(seat(catalog, body)), "host", catalog)
    assert plan.tasks == () and plan.errors and problem in plan.errors[0]


def test_an_opencode_seat_owns_its_delivery(catalog) -> None:
    assert owns_delivery("opencode")
    assert delivery_owner(seat(catalog, "    opencode", "a")) == "opencode"
    plan = lower(load(seat(catalog, "    opencode", "b")), "host", catalog)
    assert plan.agent_task.argv[-3:] == ("--", "opencode", "serve")


def test_the_view_field_opts_out_of_the_attached_tui(catalog) -> None:
    path = seat(catalog, '    opencode {\n        view "transcript"\n    }')
    agent = lower(load(path), "host", catalog, hooks="/hooks").agent_task
    assert agent.argv[agent.argv.index("driver"):] == (
        "driver", "opencode-session", "--identity", "host.oc", "--runtime-id", "host.oc",
        "--view", "transcript", "--", "opencode", "serve")
    path = seat(catalog, '    opencode {\n        view "attach"\n    }', identity="oa")
    agent = lower(load(path), "host", catalog, hooks="/hooks").agent_task
    assert "--view" not in agent.argv  # attach is the default: the argv names nothing
