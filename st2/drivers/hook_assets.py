"""Where the harness-side assets (``claude-statusline.sh``, ``pi-channel.ts``, ``omp-channel.ts``
…) are on this machine: below both the supervisor, which exports the directory to every task as
``ST_HOOKS``, and the drivers that inject them."""

from __future__ import annotations

import os
from pathlib import Path


def hooks_directory() -> str:
    """``$ST_HOOKS`` when set, else the installed package's ``st2/assets/hooks`` (a source
    checkout, ``pip install -e``, keeps them in the repository's ``hooks/``)."""
    explicit = os.environ.get("ST_HOOKS")
    if explicit:
        return explicit
    package = Path(__file__).resolve().parents[1]  # st2/, this module being st2/drivers/hook_assets.py
    packaged = package / "assets" / "hooks"
    source_tree = package.parent / "hooks"
    return str(source_tree if not packaged.is_dir() and source_tree.is_dir() else packaged)
