"""Parks through the real CLI (process tier): a park whose cause is an unbindable session socket
path advises no `st2 unpark` anywhere, because unparking would relaunch into the same failure."""

from __future__ import annotations

import json
import os

import pytest

from supervisor_support import poll_for
from st2.runtime.scope import SUN_PATH_BYTES, RuntimeScope

pytestmark = pytest.mark.process

LONG = "a" * 45      # fits under the runtime scope's own s/, not under the declared pty root


def test_a_structurally_unrecoverable_park_does_not_advise_unpark(fleet):
    root = fleet.base / ("r" * 30)
    (fleet.catalog / "catalog.kdl").write_text(f'catalog {{\n    pty-root "{root}"\n}}\n')
    fleet.seat("lead", '    argv "sleep" "600"')
    fleet.seat(LONG, '    supervisor "lead"\n    argv "sleep" "600"\n    ding')
    scope = RuntimeScope(fleet.catalog, "h", state_dir=fleet.state / "st2")
    path = scope.socket(f"h.{LONG}")
    assert path.parent.parent == root                                  # sockets live under the root
    assert len(os.fsencode(str(path))) + 1 > SUN_PATH_BYTES
    assert len(os.fsencode(str(scope.directory / "s" / f"h.{LONG}"))) + 1 <= SUN_PATH_BYTES

    validation = fleet.st2("validate")
    assert validation.returncode == 1 and f"session socket path {path} is" in validation.stdout + validation.stderr

    fleet.up("--interval", "60s")
    assert poll_for(lambda: f"PARKED h.{LONG}:" in fleet.log(), timeout=20), fleet.log()
    assert "st2 unpark" not in fleet.log()
    assert poll_for(lambda: "h.lead" in fleet.running(), timeout=20), fleet.log()
    assert sorted(fleet.running()) == ["h.lead"]                       # neither the seat nor its DING
    assert (root / scope.sockets.name / "h.lead").is_socket()          # the bindable seat's socket is there

    row = next(row for row in fleet.tasks()["tasks"] if row["runtimeId"] == f"h.{LONG}")
    assert row["parked"]["recovery"] is None
    assert f"refused at admission: session socket path {path} is" in row["parked"]["reason"]
    human = fleet.st2("tasks")
    assert f"PARKED (can never start as declared: refused at admission: session socket path {path}" in human.stdout

    refused = fleet.st2("unpark", f"h.{LONG}")
    assert refused.returncode == 1
    assert refused.stderr.startswith(f"st2 unpark: h.{LONG} can never start as declared (refused at admission:")
    assert not scope.unpark_request(f"h.{LONG}").exists()

    inbox = fleet.catalog / "agents" / "h" / "lead" / "resources" / "inbox"
    assert poll_for(lambda: len(list(inbox.glob("*.md"))) == 1, timeout=10)
    notice = next(inbox.glob("*.md")).read_text()
    assert f"subject: parked: h.{LONG} can never start as declared" in notice
    assert "st2 unpark" not in notice and f"{path}" in notice
