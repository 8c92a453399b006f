"""A different build of st2 at a new path, as a package upgrade leaves it: the whole package
tree copied, its ``__version__`` changed, and an ``st2`` entry point beside it that runs that
copy (never this checkout). Used by every proof that replaces the supervisor's entry point."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "st2"


def replacement_build(base: Path, label: str) -> Path:
    """Copy the package to ``<base>/<label>/lib/st2`` with version ``<current>+<label>`` and
    return the path of its entry point ``<base>/<label>/bin/st2``. The entry point runs with
    ``-P`` and puts the copy first on ``sys.path``, so neither the working directory nor the
    editable install of this checkout can shadow it."""
    root = Path(base) / label
    library = root / "lib"
    shutil.copytree(PACKAGE, library / "st2", ignore=shutil.ignore_patterns("__pycache__"))
    init = library / "st2" / "__init__.py"
    text = init.read_text()
    current = _version_of(text)
    init.write_text(text.replace(f'__version__ = "{current}"', f'__version__ = "{current}+{label}"'))
    entry = root / "bin" / "st2"
    entry.parent.mkdir(parents=True)
    entry.write_text(f"#!{sys.executable} -P\n"
                     "import sys\n"
                     f"sys.path.insert(0, {str(library)!r})\n"
                     "from st2.entry import main\n"
                     "raise SystemExit(main())\n")
    entry.chmod(0o755)
    return entry


def _version_of(text: str) -> str:
    for line in text.splitlines():
        if line.startswith("__version__ = "):
            return line.split('"')[1]
    raise AssertionError("st2/__init__.py declares no __version__")


def build_identity(entry: Path) -> tuple[str, str]:
    """``(version, package directory)`` the entry point really imports, asked of the entry point's
    own interpreter setup (so a shadowed copy is caught)."""
    library = Path(entry).parent.parent / "lib"
    probe = subprocess.run(
        [sys.executable, "-P", "-c",
         f"import sys; sys.path.insert(0, {str(library)!r}); import st2; print(st2.__version__); "
         "print(st2.__file__)"],
        capture_output=True, text=True, cwd=REPO, timeout=30, env={**os.environ, "PYTHONPATH": ""},
    )
    version, location = probe.stdout.split()
    return version, str(Path(location).parent)
