"""catalog.kdl: a closed field set; an absent file is the default declaration."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.declarations.catalog import CatalogDeclaration, load_catalog_declaration, parse_catalog_declaration


def summary(diagnostics) -> list[tuple[str, int, int]]:
    return [(d.code, d.span.line, d.span.column) for d in diagnostics]


def test_an_absent_catalog_declaration_is_the_default(tmp_path: Path) -> None:
    declaration, diagnostics = load_catalog_declaration(tmp_path)
    assert (declaration, diagnostics) == (CatalogDeclaration(pty_root=None, archive_after="7d"), [])
    assert declaration.archive_after_seconds == 7 * 86400
    assert declaration.resolved_pty_root(tmp_path) is None


def test_both_fields_are_read(tmp_path: Path) -> None:
    (tmp_path / "catalog.kdl").write_text('catalog {\n    pty-root "$CATALOG/../pty"\n    archive-after "12h"\n}\n')
    declaration, diagnostics = load_catalog_declaration(tmp_path)
    assert diagnostics == []
    assert declaration.archive_after_seconds == 12 * 3600
    assert declaration.resolved_pty_root(tmp_path) == tmp_path / ".." / "pty"


def test_a_relative_pty_root_anchors_at_the_catalog(tmp_path: Path) -> None:
    declaration, _ = parse_catalog_declaration('catalog { pty-root "registry" }')
    assert declaration.resolved_pty_root(tmp_path) == tmp_path / "registry"
    declaration, _ = parse_catalog_declaration('catalog { pty-root "/run/pty" }')
    assert declaration.resolved_pty_root(tmp_path) == Path("/run/pty")


def test_archive_after_zero_disables_archival() -> None:
    declaration, diagnostics = parse_catalog_declaration('catalog { archive-after "0" }')
    assert diagnostics == [] and declaration.archive_after_seconds is None


@pytest.mark.parametrize("text, expected", [
    ('catalog {\n    pty_root "/run/pty"\n}\n', [("unknown-node", 2, 5)]),
    ('catalog {\n    pty-root ""\n}\n', [("invalid-value", 2, 14)]),
    ('catalog {\n    pty-root\n}\n', [("invalid-value", 2, 5)]),
    ('catalog {\n    archive-after "soon"\n}\n', [("invalid-value", 2, 19)]),
    ('catalog {\n    archive-after "366d"\n}\n', [("invalid-value", 2, 19)]),
    ('catalog {\n    archive-after "' + "9" * 5000 + 'd"\n}\n', [("invalid-value", 2, 19)]),
    ('catalog { pty-root "/a" }\ncatalog { pty-root "/b" }\n', [("duplicate-field", 2, 1)]),
    ('agent "x" { argv "true" }\n', [("unexpected-top-level-node", 1, 1)]),
    ('catalog {\n    pty-root "/a\n}\n', [("kdl-syntax", 2, 14)]),
], ids=lambda value: f"{len(value)}-characters" if isinstance(value, str) and len(value) > 500 else None)
def test_a_malformed_declaration_is_an_error_not_a_silent_default(text: str, expected) -> None:
    declaration, diagnostics = parse_catalog_declaration(text)
    assert summary(diagnostics) == expected
    assert declaration == CatalogDeclaration()
