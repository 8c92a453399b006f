"""Every package's docstring lists its modules: each module and subpackage in a package under
``st2/`` is named there as :mod:`.name` (or :mod:`name`, or its full dotted name)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from support import REPO


def unlisted(package: Path, root: Path) -> list[str]:
    """The modules and subpackages of ``package`` its ``__init__.py`` docstring does not name."""
    dotted = ".".join(package.relative_to(root.parent).parts)
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""
    named = set(re.findall(r":mod:`~?([\w.]+)`", docstring))
    members = [path.stem for path in package.glob("*.py") if path.name != "__init__.py"]
    members += [path.name for path in package.iterdir() if (path / "__init__.py").is_file()]
    return sorted(f"{dotted}.{name}" for name in members if not {name, f".{name}", f"{dotted}.{name}"} & named)


def packages(root: Path) -> list[Path]:
    return sorted(path.parent for path in root.rglob("__init__.py") if "__pycache__" not in path.parts)


def test_every_package_docstring_names_every_module_in_it() -> None:
    root = REPO / "st2"
    assert len(packages(root)) > 20  # the walk saw the tree
    assert [name for package in packages(root) for name in unlisted(package, root)] == []


def test_the_check_names_a_module_its_package_leaves_out(tmp_path: Path) -> None:
    root = tmp_path / "st2"
    (root / "inner").mkdir(parents=True)
    (root / "__init__.py").write_text('"""Root.\n\n- :mod:`.listed` — here.\n- :mod:`st2.inner` — a package."""\n')
    (root / "listed.py").write_text("")
    (root / "forgotten.py").write_text("")
    (root / "inner" / "__init__.py").write_text("")
    (root / "inner" / "leaf.py").write_text("")
    assert {str(package.relative_to(tmp_path)): unlisted(package, root) for package in packages(root)} == {
        "st2": ["st2.forgotten"], "st2/inner": ["st2.inner.leaf"]}
