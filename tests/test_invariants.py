"""INVARIANTS.md names its proofs; every named proof must exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROOF = re.compile(r"`(tests/[\w/]+\.py)::([\w:]+)`")


def missing_proofs(text: str, root: Path) -> list[str]:
    """Return each ``tests/<file>.py::<test>`` named in ``text`` that does not resolve."""
    missing = []
    trees: dict[Path, ast.Module] = {}  # each file parsed once, however many proofs it holds
    for file_name, qualified in PROOF.findall(text):
        path = root / file_name
        if not path.is_file():
            missing.append(f"{file_name}::{qualified} (no such file)")
            continue
        if path not in trees:
            trees[path] = ast.parse(path.read_text())
        scope: list[ast.stmt] = trees[path].body
        found = True
        for part in qualified.split("::"):
            match = next(
                (
                    node
                    for node in scope
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                    and node.name == part
                ),
                None,
            )
            if match is None:
                found = False
                break
            scope = match.body if isinstance(match, ast.ClassDef) else []
        if not found:
            missing.append(f"{file_name}::{qualified}")
    return missing


def test_every_named_proof_exists() -> None:
    text = (ROOT / "INVARIANTS.md").read_text()
    assert PROOF.findall(text), "INVARIANTS.md names no proofs"
    assert missing_proofs(text, ROOT) == []


def test_a_missing_proof_is_reported(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_present():\n    pass\n")
    text = "| g | `tests/test_x.py::test_present`, `tests/test_x.py::test_absent`, `tests/test_y.py::test_z` |"
    assert missing_proofs(text, tmp_path) == [
        "tests/test_x.py::test_absent",
        "tests/test_y.py::test_z (no such file)",
    ]
