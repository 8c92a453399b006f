"""The notifier runs once per seat: it must not map OpenSSL (4.6 MiB each) for digests and temp
names that CPython's own modules give."""

from __future__ import annotations

import pytest
import subprocess
import sys

pytestmark = pytest.mark.process


def loaded(code: str) -> set[str]:
    output = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                            capture_output=True, text=True, check=True).stdout
    return set(output.split())


def test_the_notifier_does_not_load_openssl() -> None:
    modules = loaded("import st2.ding.serve, st2.ding.notifier, st2.bus.reservation, st2.runtime.scope")
    assert "st2.ding.notifier" in modules
    assert {"_hashlib", "_ssl", "hmac", "secrets"} & modules == set()


def test_the_check_sees_openssl_when_it_is_loaded() -> None:
    assert "_hashlib" in loaded("import hashlib")


def test_the_notifier_and_the_roster_never_load_the_fleet_view() -> None:
    """Textual is paid once, by `st2 top` alone: DING, the roster and the hooks never load it."""
    modules = loaded("import st2.ding.serve, st2.ding.notifier, st2.roster.build, st2.drivers.claude.hooks")
    assert "st2.roster.build" in modules
    assert {name for name in modules if name.split(".")[0] in ("textual", "rich") or name.startswith("st2.top")} == set()


def test_the_notifier_the_roster_and_the_hooks_never_load_pydantic() -> None:
    """pydantic is paid once, by the authoring path's JSON output: DING, the roster and the
    hooks (per seat, per firing) never load it, even beside the authoring records they share."""
    modules = loaded("import st2.ding.serve, st2.ding.notifier, st2.roster.build, st2.drivers.claude.hooks, "
                     "st2.authoring.publication, st2.authoring.source")
    assert {"st2.roster.build", "st2.authoring.publication"} <= modules
    assert {name for name in modules if name.split(".")[0] in ("pydantic", "pydantic_core")} == set()


def test_the_pydantic_check_sees_the_authoring_wire_models() -> None:
    """The non-firing twin: building a publish receipt's body loads pydantic."""
    modules = loaded("from pathlib import Path\nfrom st2.authoring.publication import CasLost\n"
                     "CasLost('h.a', Path('/p'), None, None).wire()")
    assert "pydantic" in modules
