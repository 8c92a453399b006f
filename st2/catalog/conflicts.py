"""Find the conflict copies a replication engine left in a catalog (Syncthing keeps the losing
side of a concurrent edit as ``<stem>.sync-conflict-<date>-<time>-<device><ext>`` beside the
winner). Every reader ignores them (they are never a record, a message or a declaration); this
walk lets Doctor name each one and validate refuse one of a declaration.

Walked: ``catalog.kdl``'s directory level, ``_templates/**``, each seat's and principal's
directory and its whole ``resources/`` tree, and the host directories between. Never walked: the
control plane ``.st2/`` and ``logs/`` (never replicated) and symlinks. Standard library only;
nothing is written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from st2.catalog.engine_files import conflict_original, is_conflict_copy
from st2.catalog.layout import (
    AGENTS_DIR,
    CATALOG_DECLARATION,
    DECLARATION,
    PRINCIPAL_DECLARATION,
    PRINCIPALS_DIR,
    RESOURCES,
    TEMPLATES_DIR,
)

# Bounds a hostile tree cannot exceed: Doctor and validate stay quick on any catalog.
MAX_DEPTH = 8


class ConflictCopy(NamedTuple):
    relative: str            # catalog-relative path of the copy
    original: str | None     # the file name it is a copy of (None when not Syncthing's exact form)
    declaration: bool        # a copy of catalog.kdl, agent.kdl, principal.kdl or of a template file


def _entries(directory: str) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as iterator:
            return sorted(iterator, key=lambda entry: entry.name)
    except OSError:
        return []


def _is_directory(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(entry: os.DirEntry) -> bool:
    try:
        return stat.S_ISREG(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False


def _tree(directory: str, relative: str, depth: int, found: list[ConflictCopy]) -> None:
    """Every conflict copy under ``directory`` (catalog-relative ``relative``)."""
    for entry in _entries(directory):
        path = f"{relative}/{entry.name}" if relative else entry.name
        if is_conflict_copy(entry.name) and _is_file(entry):
            original = conflict_original(entry.name)
            found.append(ConflictCopy(path, original, _is_declaration(original, relative)))
        elif depth < MAX_DEPTH and _is_directory(entry) and _descends(relative, entry.name):
            _tree(entry.path, path, depth + 1, found)


def _descends(relative: str, name: str) -> bool:
    """Inside a namespace, descend hosts and names, then only a seat's ``resources/`` tree."""
    parts = relative.split("/") if relative else []
    if not parts:
        return name in (AGENTS_DIR, PRINCIPALS_DIR, TEMPLATES_DIR)
    if parts[0] == TEMPLATES_DIR:
        return True
    if len(parts) < 3:
        return True
    return len(parts) > 3 or name == RESOURCES


def _is_declaration(original: str | None, relative: str) -> bool:
    parts = relative.split("/") if relative else []
    if original is None:
        return bool(parts) and parts[0] == TEMPLATES_DIR
    if not parts:
        return original == CATALOG_DECLARATION
    if parts[0] == TEMPLATES_DIR:
        return True
    if len(parts) == 3:
        return original == (DECLARATION if parts[0] == AGENTS_DIR else PRINCIPAL_DECLARATION)
    return False


def conflict_copies(catalog_root: Path) -> list[ConflictCopy]:
    """Every conflict copy in the replicated parts of the catalog, sorted by path."""
    found: list[ConflictCopy] = []
    _tree(os.fspath(catalog_root), "", 0, found)
    return sorted(found)
