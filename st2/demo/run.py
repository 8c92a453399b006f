"""`st2 demo`: build the bundled demo catalog under a temp dir and show st2 working on it."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

DEMO_HOST = "demo"


def build_demo_catalog(destination: Path) -> Path:
    """Copy the bundled demo catalog to ``destination/catalog`` and return its root."""
    root = Path(destination) / "catalog"
    source = resources.files("st2.demo") / "catalog"
    with resources.as_file(source) as source_path:
        shutil.copytree(source_path, root)
    for declaration in sorted((root / "agents").glob("*/*/agent.kdl")):
        (declaration.parent / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
        (declaration.parent / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    return root


def make_demo_directory(keep: bool) -> Path:
    directory = Path(tempfile.mkdtemp(prefix="st2-demo-", dir="/tmp"))
    return directory


def print_roster(root: Path, echo) -> None:
    from st2.clock import SYSTEM_CLOCK
    from st2.roster.build import build_roster
    from st2.roster.human import format_rows
    from st2.roster.wire import to_json

    rows, problems = build_roster(root, SYSTEM_CLOCK.wall_ms(), enrich=True)
    for problem in problems:
        echo(f"warning: {problem}")
    echo("$ st2 agents")
    echo(format_rows(rows))
    echo("$ st2 agents --json --enrich")
    echo(to_json(rows, enrich=True))


def run_demo(keep: bool, echo) -> int:
    """Build the demo catalog, run st2's main job on it, print the roster; clean up unless
    ``keep``. Return the exit status."""
    directory = make_demo_directory(keep)
    root = build_demo_catalog(directory)
    echo(f"demo catalog: {root} (host {DEMO_HOST})")
    try:
        print_roster(root, echo)
    finally:
        if keep:
            echo(f"kept: {directory}")
        else:
            shutil.rmtree(directory, ignore_errors=True)
    return 0
