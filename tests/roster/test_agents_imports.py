"""`st2 agents` pays only for what it uses: its import graph holds no supervisor, bus, usage,
delegation or driver code and none of the heavy third-party packages it does not need."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import modules_loaded_by as loaded_modules

FORBIDDEN_PREFIXES = ("pydantic", "psutil", "filelock", "sdnotify", "inotify_simple", "st2.supervisor",
                      "st2.bus", "st2.kit.usage", "st2.kit.delegation", "st2.drivers", "st2.ding",
                      "textual", "st2.top")
# The bus's own name-only mail reader (the one unread set and activity rule), nothing heavier.
ALLOWED_BUS = ("st2.bus", "st2.bus.boxes", "st2.bus.filename")


def forbidden(modules: list[str]) -> list[str]:
    return [name for name in modules if name.startswith(FORBIDDEN_PREFIXES) and name not in ALLOWED_BUS]


@pytest.mark.process
def test_agents_json_loads_no_module_it_does_not_use(catalog: Path) -> None:
    seat = catalog / "agents" / "alpha" / "one"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "one" {\n    argv "sh" "-c" "true"\n    ding\n}\n')
    (seat / "status").write_text("available\n")
    modules = loaded_modules(catalog, "agents", "--json", "--enrich")
    assert "st2.roster.row" in modules and "st2.records.harness_context" in modules and "st2.bus.boxes" in modules
    assert forbidden(modules) == []


@pytest.mark.process
def test_the_import_check_catches_a_verb_that_loads_the_supervisor(catalog: Path) -> None:
    modules = loaded_modules(catalog, "tasks", "--json")
    assert any(name.startswith("st2.supervisor") for name in forbidden(modules))
