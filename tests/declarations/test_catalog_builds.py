"""``admit-unmeasured`` in catalog.kdl: a harness and its exact builds, each problem at its own
line and column (docs/drivers.md §Measured builds)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from st2.declarations.catalog import CatalogDeclaration, parse_catalog_declaration


def summary(diagnostics) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.span.line, d.span.column, d.message) for d in diagnostics]


def test_the_admitted_builds_are_read_per_harness() -> None:
    declaration, diagnostics = parse_catalog_declaration(
        'catalog {\n    admit-unmeasured "codex" "0.160.0"\n    admit-unmeasured "opencode" "1.18.40" "1.19.0"\n}\n')
    assert diagnostics == []
    assert declaration.unmeasured == {"codex": ("0.160.0",), "opencode": ("1.18.40", "1.19.0")}
    assert declaration.admits_unmeasured("opencode", "1.19.0")
    assert not declaration.admits_unmeasured("opencode", "0.160.0")
    assert not declaration.admits_unmeasured("codex", None)
    assert not CatalogDeclaration().admits_unmeasured("codex", "0.160.0")


@pytest.mark.parametrize("text, expected", [
    ('catalog {\n    admit-unmeasured "codex"\n}\n',
     [("invalid-value", 2, 5, '`admit-unmeasured` needs a harness and at least one exact build, e.g. '
                              'admit-unmeasured "codex" "0.160.0"')]),
    ('catalog {\n    admit-unmeasured "kodex" "0.160.0"\n}\n',
     [("invalid-value", 2, 22, "`admit-unmeasured` names no harness 'kodex' "
                               "(harnesses: claude, codex, pi, omp, opencode)")]),
    ('catalog {\n    admit-unmeasured "codex" "0.160"\n}\n',
     [("invalid-value", 2, 30, "`admit-unmeasured` build '0.160' is not an exact MAJOR.MINOR.PATCH version")]),
    ('catalog {\n    admit-unmeasured "codex" "0.160.0" "^0.161.0"\n}\n',
     [("invalid-value", 2, 40, "`admit-unmeasured` build '^0.161.0' is not an exact MAJOR.MINOR.PATCH version")]),
    ('catalog {\n    admit-unmeasured "codex" "0.160.0" "0.160.0"\n}\n',
     [("duplicate-field", 2, 40, "`admit-unmeasured` names codex 0.160.0 twice")]),
    ('catalog {\n    admit-unmeasured "codex" "0.160.0"\n    admit-unmeasured "codex" "0.161.0"\n}\n',
     [("duplicate-field", 3, 22, "`admit-unmeasured` for 'codex' is declared more than once "
                                 "(name every build on one node)")]),
    ('catalog {\n    admit-unmeasured "codex" 160\n}\n',
     [("invalid-value", 2, 30, "`admit-unmeasured` accepts only string arguments, found 160")]),
])
def test_a_malformed_admission_is_an_error_at_its_argument(text: str, expected) -> None:
    declaration, diagnostics = parse_catalog_declaration(text)
    assert summary(diagnostics) == expected
    assert declaration == CatalogDeclaration()


@pytest.mark.process
def test_st2_validate_names_the_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "catalog.kdl").write_text('catalog {\n    admit-unmeasured "codex" "0.16"\n}\n')
    result = subprocess.run([sys.executable, "-m", "st2", "validate", "--catalog", str(tmp_path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "catalog.kdl:2:30" in result.stdout + result.stderr
    assert "build '0.16' is not an exact MAJOR.MINOR.PATCH version" in result.stdout + result.stderr
