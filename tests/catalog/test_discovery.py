"""Strict discovery of seats and principals, and the one tolerated legacy shape."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.catalog.discovery import discover

DECLARATION = 'agent "{identity}" {{ argv "true" }}\n'


def make_seat(catalog: Path, host: str, identity: str) -> Path:
    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text(DECLARATION.format(identity=identity))
    return directory


def codes(found) -> list[tuple[str, str, str]]:
    return [(diagnostic.code, diagnostic.severity, diagnostic.source) for diagnostic in found.diagnostics]


def test_seats_are_found_sorted_by_host_then_identity(catalog: Path) -> None:
    make_seat(catalog, "zeta", "a")
    make_seat(catalog, "alpha", "b")
    make_seat(catalog, "alpha", "a")
    found = discover(catalog)
    assert [(seat.host, seat.identity) for seat in found.seats] == [("alpha", "a"), ("alpha", "b"), ("zeta", "a")]
    assert found.seats[0].directory == catalog / "agents" / "alpha" / "a"
    assert found.seats[0].declaration_path == catalog / "agents" / "alpha" / "a" / "agent.kdl"
    assert found.seats[0].runtime_id == "alpha.a"
    assert found.errors == [] and found.warnings == []


def test_a_missing_agents_namespace_is_an_empty_catalog(tmp_path: Path) -> None:
    found = discover(tmp_path / "nowhere")
    assert found.seats == [] and found.principals == [] and found.errors == []


def test_the_control_plane_is_never_discovered(catalog: Path) -> None:
    make_seat(catalog, "h", "live")
    archived = catalog / ".st2" / "archive" / "h" / "gone"
    archived.mkdir(parents=True)
    (archived / "agent.kdl").write_text(DECLARATION.format(identity="gone"))
    found = discover(catalog)
    assert [seat.identity for seat in found.seats] == ["live"]
    assert found.errors == []


@pytest.mark.parametrize("level", ["host", "identity"])
def test_a_dot_st2_entry_inside_the_namespace_is_an_error_not_a_seat(catalog: Path, level: str) -> None:
    if level == "host":
        (catalog / "agents" / ".st2" / "x").mkdir(parents=True)
        (catalog / "agents" / ".st2" / "x" / "agent.kdl").write_text(DECLARATION.format(identity="x"))
        expected = "agents/.st2"
    else:
        (catalog / "agents" / "h" / ".st2").mkdir(parents=True)
        (catalog / "agents" / "h" / ".st2" / "agent.kdl").write_text(DECLARATION.format(identity=".st2"))
        expected = "agents/h/.st2"
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("catalog-entry-unsafe-name", "error", expected)]


def test_a_symlinked_identity_is_an_error_and_not_followed(catalog: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "agent.kdl").write_text(DECLARATION.format(identity="linked"))
    (catalog / "agents" / "h").mkdir()
    os.symlink(elsewhere, catalog / "agents" / "h" / "linked")
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("catalog-entry-symlink", "error", "agents/h/linked")]


def test_a_symlinked_host_is_an_error(catalog: Path, tmp_path: Path) -> None:
    real = tmp_path / "realhost"
    (real / "x").mkdir(parents=True)
    (real / "x" / "agent.kdl").write_text(DECLARATION.format(identity="x"))
    os.symlink(real, catalog / "agents" / "h")
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("catalog-entry-symlink", "error", "agents/h")]


def test_a_symlinked_agents_namespace_is_an_error(tmp_path: Path) -> None:
    real = tmp_path / "real-agents"
    (real / "h" / "x").mkdir(parents=True)
    (real / "h" / "x" / "agent.kdl").write_text(DECLARATION.format(identity="x"))
    catalog = tmp_path / "catalog"
    catalog.mkdir()
    os.symlink(real, catalog / "agents")
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("catalog-entry-symlink", "error", "agents")]


def test_a_file_at_the_host_level_is_an_error(catalog: Path) -> None:
    make_seat(catalog, "h", "ok")
    (catalog / "agents" / "h" / "notes.txt").write_text("x")
    (catalog / "agents" / "stray-file").write_text("x")
    found = discover(catalog)
    assert [seat.identity for seat in found.seats] == ["ok"]
    assert codes(found) == [("catalog-entry-unexpected", "error", "agents/h/notes.txt"),
                            ("catalog-entry-unexpected", "error", "agents/stray-file")]


def test_a_symlinked_or_special_declaration_is_an_error(catalog: Path, tmp_path: Path) -> None:
    (catalog / "agents" / "h" / "linked").mkdir(parents=True)
    target = tmp_path / "real.kdl"
    target.write_text(DECLARATION.format(identity="linked"))
    os.symlink(target, catalog / "agents" / "h" / "linked" / "agent.kdl")
    (catalog / "agents" / "h" / "fifo").mkdir()
    os.mkfifo(catalog / "agents" / "h" / "fifo" / "agent.kdl")
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("declaration-not-regular", "error", "agents/h/fifo/agent.kdl"),
                            ("declaration-not-regular", "error", "agents/h/linked/agent.kdl")]


def test_an_identity_directory_without_a_declaration_is_a_warning_not_a_seat(catalog: Path) -> None:
    (catalog / "agents" / "h" / "orphan" / "resources").mkdir(parents=True)
    found = discover(catalog)
    assert found.seats == []
    assert codes(found) == [("catalog-entry-unexpected", "warning", "agents/h/orphan")]
    assert found.errors == []


LEGACY = ".harness-context.tmp-4242-7"


def test_an_exact_legacy_staging_file_is_skipped_and_left_untouched(catalog: Path) -> None:
    make_seat(catalog, "h", "ok")
    legacy = catalog / "agents" / "h" / LEGACY
    legacy.write_bytes(b'{"partial":')
    before = os.stat(legacy)
    found = discover(catalog)
    assert [seat.identity for seat in found.seats] == ["ok"]
    assert found.errors == [] and found.warnings == []
    assert found.skipped == [legacy]
    after = os.stat(legacy)
    assert legacy.read_bytes() == b'{"partial":'
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)


def test_a_directory_with_the_legacy_name_is_an_error(catalog: Path) -> None:
    (catalog / "agents" / "h" / LEGACY).mkdir(parents=True)
    found = discover(catalog)
    # A directory with that name is judged like any identity directory: its leading `.` is
    # outside the name grammar (st2/catalog/names.py), so it is reported, never silently skipped.
    assert found.skipped == []
    assert codes(found) == [("catalog-entry-unsafe-name", "error", f"agents/h/{LEGACY}")]


def test_a_directory_with_the_legacy_name_holding_a_declaration_is_not_skipped(catalog: Path) -> None:
    directory = catalog / "agents" / "h" / LEGACY
    directory.mkdir(parents=True)
    (directory / "agent.kdl").write_text("agent { argv \"true\" }\n")
    found = discover(catalog)
    assert found.skipped == []
    assert found.seats == [] and [code for code, _, _ in codes(found)] == ["catalog-entry-unsafe-name"]


def test_a_symlink_with_the_legacy_name_is_an_error(catalog: Path, tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("x")
    (catalog / "agents" / "h").mkdir()
    os.symlink(target, catalog / "agents" / "h" / LEGACY)
    found = discover(catalog)
    assert found.skipped == []
    assert codes(found) == [("catalog-entry-symlink", "error", f"agents/h/{LEGACY}")]


def test_a_special_file_with_the_legacy_name_is_an_error(catalog: Path) -> None:
    (catalog / "agents" / "h").mkdir()
    os.mkfifo(catalog / "agents" / "h" / LEGACY)
    found = discover(catalog)
    assert found.skipped == []
    assert codes(found) == [("catalog-entry-unexpected", "error", f"agents/h/{LEGACY}")]


@pytest.mark.parametrize("name", [
    ".harness-context.tmp-4242-",
    ".harness-context.tmp--7",
    ".harness-context.tmp-42a-7",
    ".harness-context.tmp-4242-7.json",
    "harness-context.tmp-4242-7",
    ".harness-state.tmp-4242-7",
    ".harness-context.tmp-4242",
    ".harness-context.tmp-٤٢-7",  # Arabic-Indic digits are not the numeric pid the writer used
    ".DS_Store",
])
def test_a_near_miss_of_the_legacy_name_is_an_error(catalog: Path, name: str) -> None:
    (catalog / "agents" / "h").mkdir()
    (catalog / "agents" / "h" / name).write_text("x")
    found = discover(catalog)
    assert found.skipped == []
    assert codes(found) == [("catalog-entry-unexpected", "error", f"agents/h/{name}")]


def test_the_legacy_shape_is_tolerated_only_at_the_host_level(catalog: Path) -> None:
    (catalog / "agents" / LEGACY).write_text("x")
    found = discover(catalog)
    assert found.skipped == []
    assert codes(found) == [("catalog-entry-unexpected", "error", f"agents/{LEGACY}")]


def test_principals_are_discovered_strictly(catalog: Path) -> None:
    directory = catalog / "principals" / "h" / "ci-bridge"
    directory.mkdir(parents=True)
    (directory / "principal.kdl").write_text('principal "ci-bridge"\n')
    (catalog / "principals" / "h" / LEGACY).write_text("x")  # the legacy shape is an agents-only exception
    found = discover(catalog)
    assert [(principal.host, principal.name) for principal in found.principals] == [("h", "ci-bridge")]
    assert found.principals[0].declaration_path == directory / "principal.kdl"
    assert codes(found) == [("catalog-entry-unexpected", "error", f"principals/h/{LEGACY}")]
