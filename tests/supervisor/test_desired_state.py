"""`st2 agent desired-state`: source-preserving lifecycle edits, refusals that write nothing,
marker-matched authority, and convergence by a resident supervisor."""

from __future__ import annotations

import pytest

from supervisor_support import poll_for
from st2.catalog.location import CatalogLocation
from st2.supervisor.desired_state import DesiredStateRefused, set_desired_state
from st2.supervisor.health import task_health

ORIGINAL = '''// a comment that must survive
agent "x" {
    name "X"   // trailing comment
    argv "sleep" "600"
}
'''


@pytest.fixture
def seat(tmp_path):
    directory = tmp_path / "c" / "agents" / "h" / "x"
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(ORIGINAL)
    return CatalogLocation(tmp_path / "c", "h"), directory / "agent.kdl"


def test_suspend_retire_and_resume_edit_only_the_lifecycle_line(seat):
    location, path = seat
    assert set_desired_state(location, "x", "suspended", "waiting for CI").changed
    assert path.read_text() == ORIGINAL.replace('agent "x" {\n', 'agent "x" {\n    desired-state "suspended" reason="waiting for CI"\n')
    set_desired_state(location, "h.x", "retired", 'said "done"')
    assert path.read_text() == ORIGINAL.replace('agent "x" {\n', 'agent "x" {\n    desired-state "retired" reason="said \\"done\\""\n')
    assert set_desired_state(location, "x", "running", None).changed
    assert path.read_text() == ORIGINAL
    assert not set_desired_state(location, "x", "running", None).changed
    assert (location.root / ".st2" / "catalog-generation").read_text() == "3\n"


def test_the_legacy_retired_form_is_replaced_by_the_canonical_node(seat):
    location, path = seat
    path.write_text(ORIGINAL.replace('    name "X"', '    retired #true\n    name "X"'))
    set_desired_state(location, "x", "suspended", "back soon")
    assert path.read_text() == ORIGINAL.replace('agent "x" {\n', 'agent "x" {\n    desired-state "suspended" reason="back soon"\n')


@pytest.mark.parametrize("state, reason", [
    ("suspended", None), ("retired", ""), ("running", "why"), ("paused", "x"),
    ("suspended", "x" * 161), ("suspended", "line\nbreak"),
])
def test_an_invalid_request_is_refused_and_writes_nothing(seat, state, reason):
    location, path = seat
    with pytest.raises(DesiredStateRefused):
        set_desired_state(location, "x", state, reason)
    assert path.read_text() == ORIGINAL
    assert not (location.root / ".st2" / "catalog-generation").exists()


def test_a_managed_declaration_is_edited_only_by_its_named_owner(seat):
    location, path = seat
    managed = ORIGINAL.replace('    name "X"', '    meta { managed-by "nix"; }\n    name "X"')
    path.write_text(managed)
    with pytest.raises(DesiredStateRefused) as refused:
        set_desired_state(location, "x", "suspended", "maintenance")
    assert "managed by nix" in str(refused.value)
    with pytest.raises(DesiredStateRefused):
        set_desired_state(location, "x", "suspended", "maintenance", managed_by="ansible")
    assert path.read_text() == managed
    assert set_desired_state(location, "x", "suspended", "maintenance", managed_by="nix").changed


@pytest.mark.process
def test_a_resident_supervisor_converges_suspension_and_resume_at_once(fleet):
    fleet.seat("x", '    argv "sleep" "600"\n    exec "job" { argv "sleep" "600"; }')
    fleet.seat("peer", '    argv "sleep" "600"')
    fleet.up("--interval", "60s")
    assert poll_for(lambda: len(fleet.running()) == 3, timeout=20), fleet.log()
    peer = fleet.running()["h.peer"]
    result = fleet.st2("agent", "desired-state", "x", "suspended", "--reason", "maintenance")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "h.x is now suspended (maintenance); `st2 up` converges its tasks\n"
    assert poll_for(lambda: sorted(fleet.running()) == ["h.peer"], timeout=10), fleet.log()
    # The pass that stops the tasks removes their records just after the processes are gone.
    assert poll_for(lambda: [f.line() for f in task_health(fleet.catalog, "h", 0, scope=fleet.scope)] == [],
                    timeout=10), [f.line() for f in task_health(fleet.catalog, "h", 0, scope=fleet.scope)]
    assert fleet.st2("agent", "desired-state", "x", "running").returncode == 0
    assert poll_for(lambda: len(fleet.running()) == 3, timeout=10), fleet.log()
    assert fleet.running()["h.peer"] == peer
