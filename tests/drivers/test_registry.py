"""The driver table is the one list of harnesses (st2.base.harnesses): every driver package declares
the same contract, every other list of harnesses derives from the table and keeps the text it
pins, and a sixth harness is one row of the table and one new package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO

from st2 import drivers
from st2.base import harnesses
from st2.declarations.model import DRIVER_HARNESSES

PINNED_ORDER = ("claude", "codex", "pi", "omp", "opencode")
HERE = Path(__file__).parent


def contract_problems(harness: str) -> list[str]:
    """What ``harness``'s driver package gets wrong about the declared contract."""
    from st2.drivers.version_gate import admits

    package = drivers.package(harness)
    missing = [name for name in harnesses.CONTRACT if not hasattr(package, name)]
    if missing:
        return [f"{harness}: {name} not declared" for name in missing]
    problems = []
    if package.HARNESS != harness:
        problems.append(f"{harness}: HARNESS is {package.HARNESS!r}")
    if not isinstance(package.OWNS_DELIVERY, bool):
        problems.append(f"{harness}: OWNS_DELIVERY is not a bool")
    if package.VERSION_GATE not in (None, "exact", "minor"):
        problems.append(f"{harness}: VERSION_GATE {package.VERSION_GATE!r}")
    if not package.MEASURED_VERSIONS:
        problems.append(f"{harness}: no measured build")
    if package.VERSION_GATE is None and package.SUPPORTED_VERSIONS != ():
        problems.append(f"{harness}: SUPPORTED_VERSIONS without a gate")
    if package.VERSION_GATE is not None:
        problems.extend(f"{harness}: measured build {build} refused by its own gate"
                        for build in package.MEASURED_VERSIONS
                        if not admits(package.VERSION_GATE, package.SUPPORTED_VERSIONS, build))
    if package.VERSION_GATE == "exact":
        problems.extend(f"{harness}: its gate admits {build}, which no capture measured"
                        for build in package.SUPPORTED_VERSIONS if build not in package.MEASURED_VERSIONS)
    unknown = set(package.SESSION_OPTIONS) - {"--model", "--operator", "--view"}
    if unknown:
        problems.append(f"{harness}: session options the route cannot pass {sorted(unknown)}")
    grammar = drivers.screen_grammar(harness)
    if (grammar is not None) != (harness in harnesses.SCREEN_DISPATCH_ORDER):
        problems.append(f"{harness}: screen grammar {package.SCREEN_GRAMMAR!r} against the dispatch order")
    if not callable(drivers.expansion(harness).expand):
        problems.append(f"{harness}: no expand")
    if not callable(drivers.driver_module(harness, "session").run_session):
        problems.append(f"{harness}: no run_session")
    return problems


def test_every_driver_package_declares_the_contract() -> None:
    assert harnesses.names() == PINNED_ORDER
    assert [problem for harness in harnesses.names() for problem in contract_problems(harness)] == []


def test_the_contract_check_fires(monkeypatch) -> None:
    import st2.drivers.omp as omp

    monkeypatch.setattr(omp, "MEASURED_VERSIONS", ("18.3.0",))
    monkeypatch.delattr(omp, "SESSION_OPTIONS")
    assert contract_problems("omp") == ["omp: SESSION_OPTIONS not declared"]
    monkeypatch.setattr(omp, "SESSION_OPTIONS", ("--port",), raising=False)
    assert contract_problems("omp") == ["omp: measured build 18.3.0 refused by its own gate",
                                        "omp: session options the route cannot pass ['--port']"]
    import st2.drivers.codex as codex

    monkeypatch.setattr(codex, "SUPPORTED_VERSIONS", (*codex.MEASURED_VERSIONS, "0.160.0"))
    assert contract_problems("codex") == ["codex: its gate admits 0.160.0, which no capture measured"]


@pytest.mark.process
def test_a_driver_package_is_light_to_import() -> None:
    """Hot paths import st2.drivers and a driver's package: the table and the packages import
    nothing of st2's beyond themselves."""
    script = ("import sys\nbefore = set(sys.modules)\nfrom st2 import drivers\n"
              "for harness in drivers.harnesses.names():\n    drivers.package(harness)\n"
              "print(' '.join(sorted(m for m in set(sys.modules) - before if m.startswith('st2'))))\n")
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["st2", "st2.base", "st2.base.harnesses", "st2.drivers", "st2.drivers.claude", "st2.drivers.codex",
                      "st2.drivers.omp", "st2.drivers.opencode", "st2.drivers.pi"]


def test_a_harness_expands_exactly_when_the_registry_names_it() -> None:
    for row in harnesses.DRIVERS:
        assert drivers.expansion(row.harness).__name__ == f"{row.package}.expansion"
    assert drivers.expansion("shell") is None and drivers.expansion("nonesuch") is None
    assert drivers.expansion(None) is None


def test_every_declared_harness_has_a_package_and_the_named_ones_a_grammar() -> None:
    for harness in DRIVER_HARNESSES:
        assert drivers.package(harness).HARNESS == harness
    assert drivers.package("nonesuch") is None
    assert [type(grammar).__module__ for grammar in drivers.screen_grammars()] == [
        "st2.drivers.codex.screen", "st2.drivers.pi.screen", "st2.drivers.omp.screen", "st2.drivers.claude.screen"]
    assert drivers.screen_grammar("opencode") is None and drivers.screen_grammar(None) is None


def test_every_list_of_harnesses_derives_from_the_table_with_its_pinned_text() -> None:
    from st2.cli.driver import driver
    from st2.declarations.diagnostics import CODES
    from st2.front.table import session_routes
    from st2.records import driver_diagnostic, harness_context

    wrapper_options = {verb[1]: row.shape.options for verb, row in session_routes().items()}
    assert DRIVER_HARNESSES == harness_context.HARNESSES == driver_diagnostic.DRIVERS == PINNED_ORDER
    assert CODES["driver-block-invalid"] == (
        "a typed driver block (claude, codex, pi, omp, opencode) its driver cannot expand")
    assert drivers.available_harnesses() == ("shell", "claude", "codex", "pi", "omp", "opencode")
    common = ("--identity", "--runtime-id", "--catalog", "--host")
    assert wrapper_options == {"claude-session": common, "codex-session": common + ("--operator",),
                                     "pi-session": common, "omp-session": common,
                                     "opencode-session": common + ("--model", "--operator", "--view")}
    assert drivers.native_session_verbs() == ("codex-session", "opencode-session")
    assert [drivers.owns_delivery(harness) for harness in PINNED_ORDER] == [False, True, False, False, True]
    # The click CLI's wrapper verbs: one per driver, taking the options the route recognizes.
    for verb, options in wrapper_options.items():
        command = driver.commands[verb]
        declared = {option for parameter in command.params for option in getattr(parameter, "opts", ())
                    if option.startswith("--")}
        assert declared == set(options), verb


@pytest.mark.process
def test_a_sixth_harness_is_one_row_and_one_package(tmp_path: Path) -> None:
    """A test-only driver (tests/drivers/sixth_driver) registered by one row: the declaration
    model, the record readers, the validation text, the wrapper route and the click verb, the
    screen dispatch and the delivery owners all take it, and it passes the same contract check."""
    agent = tmp_path / "agent.kdl"
    agent.write_text('agent "worker" {\n    sixth { }\n}\n')
    script = f"""
import json, sys
sys.path[:0] = [{str(HERE)!r}, {str(REPO / "tests")!r}]
from st2.base import harnesses
harnesses.DRIVERS += (harnesses.Driver("sixth", "sixth_driver"),)
harnesses.SCREEN_DISPATCH_ORDER += ("sixth",)
from st2 import drivers
from st2.declarations.agent import load_agent
from st2.declarations.diagnostics import CODES
from st2.declarations.model import DRIVER_HARNESSES
from st2.drivers import session_route
from st2.front.table import session_routes
from st2.records import driver_diagnostic, harness_context
from st2.cli.driver import driver
import test_registry
declaration, diagnostics = load_agent({str(agent)!r})
expanded = drivers.expand_driver_blocks(declaration, "h", ["st2"])
status = session_route._core("sixth-session", None, {{"--identity": "h.worker", "--operator": "op"}}, ["sixth", "-x"])
print(json.dumps({{
    "model": DRIVER_HARNESSES, "context": harness_context.HARNESSES, "diagnostic": driver_diagnostic.DRIVERS,
    "text": CODES["driver-block-invalid"], "argv": expanded.argv, "status": status,
    "options": session_routes()[("driver", "sixth-session")].shape.options, "native": drivers.native_session_verbs(),
    "grammars": [grammar.name for grammar in drivers.screen_grammars()],
    "offered": drivers.available_harnesses(), "contract": test_registry.contract_problems("sixth"),
    "cli": sorted(option for parameter in driver.commands["sixth-session"].params
                  for option in getattr(parameter, "opts", ()) if option.startswith("--"))}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    said, report = result.stdout.splitlines()
    found = json.loads(report)
    assert said == "sixth-session h.worker None op sixth -x"
    assert found == {
        "model": [*PINNED_ORDER, "sixth"], "context": [*PINNED_ORDER, "sixth"], "diagnostic": [*PINNED_ORDER, "sixth"],
        "text": "a typed driver block (claude, codex, pi, omp, opencode, sixth) its driver cannot expand",
        "argv": ["st2", "driver", "sixth-session", "--identity", "h.worker", "--", "sixth"], "status": 6,
        "options": ["--identity", "--runtime-id", "--catalog", "--host", "--operator"],
        "native": ["codex-session", "opencode-session", "sixth-session"],
        "grammars": ["codex", "pi", "omp", "claude", "sixth"],
        "offered": ["shell", *PINNED_ORDER, "sixth"], "contract": [],
        "cli": ["--catalog", "--host", "--identity", "--operator", "--runtime-id"]}
