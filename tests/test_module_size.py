"""No module in st2/ is over 500 lines (CONVENTIONS: a module past ~500 lines is a place to split)."""

from __future__ import annotations

from pathlib import Path

from support import REPO

LIMIT = 500


def lines_of(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def oversized(root: Path, limit: int = LIMIT) -> dict[str, int]:
    """``{path relative to root's parent: lines}`` of every module under ``root`` past ``limit``."""
    return {str(path.relative_to(root.parent)): count for path in sorted(root.rglob("*.py"))
            if (count := lines_of(path)) > limit}


def test_no_module_in_st2_is_over_the_limit() -> None:
    assert oversized(REPO / "st2") == {}


def test_the_size_check_fires_on_a_long_module(tmp_path: Path) -> None:
    root = tmp_path / "st2"
    (root / "inner").mkdir(parents=True)
    (root / "short.py").write_text("x = 1\n" * LIMIT)
    (root / "inner" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert oversized(root) == {"st2/inner/long.py": LIMIT + 1}
