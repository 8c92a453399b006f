"""`st2 agent desired-state`: source-preserving lifecycle edits, refusals that write nothing,
marker-matched authority, and convergence by a resident supervisor."""

from __future__ import annotations

import pytest

from supervisor_support import poll_for
from st2.catalog.location import CatalogLocation
from st2.authoring.desired_state import DesiredStateRefused, set_desired_state
from st2.doctor.health import task_health

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


# -- marker-matched authority (docs/catalog.md §Declaration authority) -----------------

MULTI = ORIGINAL.replace('    name "X"', '    meta { managed-by "nix"; managed-by "catalog"; }\n    name "X"')
NIX = ORIGINAL.replace('    name "X"', '    meta { managed-by "nix"; }\n    name "X"')
LABELLED = ORIGINAL.replace('    name "X"', '    meta { managed-by "ansible"; }\n    name "X"')


@pytest.mark.parametrize("body, assertion, code", [
    (NIX, None, "nix-managed-declaration"),
    (NIX, "ansible", "managed-by-mismatch"),
    (NIX, "", "invalid-managed-by"),
    (NIX, " nix", "invalid-managed-by"),
    (NIX, "nix ", "invalid-managed-by"),
    (ORIGINAL, "nix", "managed-by-unmarked"),
    (ORIGINAL, "", "invalid-managed-by"),
    (MULTI, None, "nix-managed-declaration"),
    (MULTI, "nix", "managed-by-mismatch"),
    (MULTI, "catalog", "managed-by-mismatch"),
])
def test_every_inexact_marker_claim_is_refused_before_any_write(seat, body, assertion, code):
    location, path = seat
    path.write_text(body)
    with pytest.raises(DesiredStateRefused) as refused:
        set_desired_state(location, "x", "retired", "done", managed_by=assertion)
    assert f"[{code}]" in str(refused.value)
    assert path.read_text() == body
    assert not (location.root / ".st2" / "catalog-generation").exists()


def test_the_exact_marker_rewrites_only_the_lifecycle_line(seat):
    location, path = seat
    path.write_text(NIX)
    assert set_desired_state(location, "x", "retired", "done", managed_by="nix").changed
    assert path.read_text() == NIX.replace('agent "x" {\n', 'agent "x" {\n    desired-state "retired" reason="done"\n')


def test_other_markers_are_labels_that_refuse_nothing_unasserted(seat):
    location, path = seat
    path.write_text(LABELLED)
    assert set_desired_state(location, "x", "suspended", "maintenance").changed
    assert set_desired_state(location, "x", "running", None, managed_by="ansible").changed
    assert path.read_text() == LABELLED


def test_a_marker_matched_retirement_the_catalog_would_reject_is_refused(seat):
    location, path = seat
    path.write_text(NIX)
    broken = location.root / "agents" / "h" / "broken"
    broken.mkdir()
    (broken / "agent.kdl").write_text('agent "broken" {\n')
    with pytest.raises(DesiredStateRefused) as refused:
        set_desired_state(location, "x", "retired", "done", managed_by="nix")
    assert "[full-catalog-validation]" in str(refused.value)
    assert "agents/h/broken/agent.kdl:1:" in str(refused.value)
    assert path.read_text() == NIX
    (broken / "agent.kdl").write_text('agent "broken" {\n    argv "true"\n}\n')
    assert set_desired_state(location, "x", "retired", "done", managed_by="nix").changed


def test_an_edit_the_seat_alone_accepts_but_the_catalog_rejects_is_refused(seat):
    """The declaration parses on its own (what the lifecycle verb used to check) but a render
    copy source is missing, which full-catalog validation rejects."""
    location, path = seat
    rendered = ORIGINAL.replace('    name "X"', '    workspace "/tmp"\n    render { copy "missing.md" "x.md"; }\n    name "X"')
    path.write_text(rendered)
    with pytest.raises(DesiredStateRefused) as refused:
        set_desired_state(location, "x", "suspended", "maintenance")
    assert "[full-catalog-validation]" in str(refused.value) and "render-invalid" in str(refused.value)
    assert path.read_text() == rendered


@pytest.mark.process
def test_cli_managed_by_authority_retires_a_projected_seat_and_refuses_every_inexact_claim(fleet):
    directory = fleet.seat("x", '    meta { managed-by "nix"; }\n    argv "sleep" "600"')
    original = (directory / "agent.kdl").read_text()
    for assertion, code in ([], "nix-managed-declaration"), (["--managed-by", "home-manager"], "managed-by-mismatch"), \
            (["--managed-by", ""], "invalid-managed-by"), (["--managed-by", "nix "], "invalid-managed-by"):
        refused = fleet.st2("agent", "desired-state", "x", "retired", "--reason", "done", *assertion)
        assert refused.returncode == 1, refused.stdout
        assert f"[{code}]" in refused.stderr and "Traceback" not in refused.stderr
        assert (directory / "agent.kdl").read_text() == original
    admitted = fleet.st2("agent", "desired-state", "x", "retired", "--reason", "done", "--managed-by", "nix")
    assert admitted.returncode == 0, admitted.stderr
    assert admitted.stdout == "h.x is now retired (done); `st2 up` converges its tasks\n"
    assert (directory / "agent.kdl").read_text() == original.replace(
        'agent "x" {\n', 'agent "x" {\n    desired-state "retired" reason="done"\n')
