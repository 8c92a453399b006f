"""The driver registry is explicit: a harness has an expansion, a screen grammar or a package
exactly when st2.drivers names it, never because a module happens to import."""

from __future__ import annotations

from st2 import drivers
from st2.declarations.model import DRIVER_HARNESSES


def test_a_harness_expands_exactly_when_the_registry_names_it() -> None:
    for harness in DRIVER_HARNESSES:
        module = drivers.expansion(harness)
        assert (module is not None) == (harness in drivers.EXPANDING_HARNESSES), harness
        if module is not None:
            assert module.__name__ == f"st2.drivers.{harness}.expansion"
    assert drivers.expansion("shell") is None and drivers.expansion("nonesuch") is None


def test_every_declared_harness_has_a_package_and_the_named_ones_a_grammar() -> None:
    for harness in DRIVER_HARNESSES:
        assert drivers.package(harness).HARNESS == harness
    assert drivers.package("nonesuch") is None
    for harness in drivers.SCREEN_GRAMMAR_HARNESSES:
        assert type(drivers.screen_grammar(harness)).__module__ == f"st2.drivers.{harness}.screen"
    assert drivers.screen_grammar("opencode") is None and drivers.screen_grammar(None) is None
