"""Strict discovery of the seats and principals a catalog declares.

A seat is ``<catalog>/agents/<host>/<identity>/agent.kdl``; a principal is
``<catalog>/principals/<host>/<name>/principal.kdl``. Discovery walks only those two namespaces,
so the control plane ``<catalog>/.st2`` (archived seats included) is structurally unreachable.

The walk is strict: every entry in a namespace must be a real (non-symlink) directory with a safe
name (not empty, ``.``, ``..``, ``.git`` or ``.st2``), and the declaration a real regular file.
Anything else is reported as an error diagnostic and never becomes a seat, with one exception
(docs/records.md §Placement and replicated paths): an old harness-context writer staged beside the seats,
so an exact ``.harness-context.tmp-<digits>-<digits>`` *regular, non-symlink file* directly under
``agents/<host>/`` is skipped and left untouched. A directory, a symlink or a special file with
that name, and every near miss, stays an error. A replication engine's own entry
(:func:`st2.catalog.engine_files.is_engine_file`: ``.stfolder``, ``.stversions``,
``.syncthing.*.tmp``, a ``*.sync-conflict-*`` copy, ``.unison.*``, ``.~tmp~``, rsync's
``.<name>.XXXXXX``) is likewise skipped (listed in ``engine``) wherever the walk lists a
directory: as a regular file, or as a real directory for the names engines make as directories
(the markers, ``.~tmp~``, ``.unison.*``); as a symlink or special file, or a directory with
another engine name, it stays strict.
An identity directory without ``agent.kdl`` is not a seat (its replicated state may outlive the
declaration); it is reported as a warning.

Standard library only; nothing is written.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from st2.catalog.engine_files import is_engine_file
from st2.catalog.layout import AGENTS_DIR, DECLARATION, PRINCIPAL_DECLARATION, PRINCIPALS_DIR
from st2.catalog.names import refusal, shown
from st2.declarations.diagnostics import CATALOG, ERROR, WARNING, Diagnostic

LEGACY_HARNESS_CONTEXT_STAGING = re.compile(r"\.harness-context\.tmp-[0-9]+-[0-9]+")
UNSAFE_NAMES = ("", ".", "..", ".git", ".st2")


class DiscoveredSeat(NamedTuple):
    host: str
    identity: str
    directory: Path
    declaration_path: Path

    @property
    def runtime_id(self) -> str:
        return f"{self.host}.{self.identity}"


class DiscoveredPrincipal(NamedTuple):
    host: str
    name: str
    directory: Path
    declaration_path: Path


class Discovery:
    """What a catalog declares. ``errors`` and ``warnings`` are catalog-layer diagnostics;
    ``skipped`` lists the entries deliberately overlooked (the exact legacy staging files),
    ``engine`` the replication engine's own entries overlooked."""

    __slots__ = ("seats", "principals", "errors", "warnings", "skipped", "engine")

    def __init__(self) -> None:
        self.seats: list[DiscoveredSeat] = []
        self.principals: list[DiscoveredPrincipal] = []
        self.errors: list[Diagnostic] = []
        self.warnings: list[Diagnostic] = []
        self.skipped: list[Path] = []
        self.engine: list[Path] = []

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return sorted(self.errors + self.warnings, key=lambda diagnostic: diagnostic.source or "")


def diagnostic_host(diagnostic: Diagnostic) -> str | None:
    """The host whose subtree (``agents/<host>/…`` or ``principals/<host>/…``) a discovery
    diagnostic concerns, or None for one about the namespaces themselves. Another host's problem
    is that host's to fix: nothing remote gates this host's work."""
    parts = (diagnostic.source or "").split("/")
    if len(parts) >= 2 and parts[0] in (AGENTS_DIR, PRINCIPALS_DIR):
        return parts[1]
    return None


def discover(root: Path) -> Discovery:
    """Walk ``root``'s agents and principals namespaces. A missing namespace is empty, not an error."""
    root = Path(root)
    found = Discovery()
    for host, identity, directory, declaration in _walk(root, AGENTS_DIR, DECLARATION, found, legacy=True):
        found.seats.append(DiscoveredSeat(host, identity, directory, declaration))
    for host, name, directory, declaration in _walk(root, PRINCIPALS_DIR, PRINCIPAL_DECLARATION, found, legacy=False):
        found.principals.append(DiscoveredPrincipal(host, name, directory, declaration))
    found.seats.sort(key=lambda seat: (seat.host, seat.identity))
    found.principals.sort(key=lambda principal: (principal.host, principal.name))
    return found


def _walk(root: Path, namespace: str, declaration_name: str, found: Discovery, legacy: bool):
    top = root / namespace
    top_entries = _list(root, top, namespace, found, missing_ok=True)
    if top_entries is None:
        return
    for host_entry in top_entries:
        host_relative = f"{namespace}/{host_entry.name}"
        if _is_engine_entry(host_entry):
            found.engine.append(Path(host_entry.path))
            continue
        if not _is_real_directory(host_entry, host_relative, found, "host"):
            continue
        host_entries = _list(root, Path(host_entry.path), host_relative, found, missing_ok=False)
        for entry in host_entries or ():
            relative = f"{host_relative}/{entry.name}"
            if legacy and LEGACY_HARNESS_CONTEXT_STAGING.fullmatch(entry.name) and _is_regular_file(entry):
                found.skipped.append(Path(entry.path))
                continue
            if _is_engine_entry(entry):
                found.engine.append(Path(entry.path))
                continue
            kind = "identity" if namespace == AGENTS_DIR else "principal"
            if not _is_real_directory(entry, relative, found, kind):
                continue
            directory = Path(entry.path)
            declaration = directory / declaration_name
            try:
                mode = os.lstat(declaration).st_mode
            except FileNotFoundError:
                found.warnings.append(_problem(
                    "catalog-entry-unexpected", relative,
                    f"{relative} has no {declaration_name}, so it is not a {'seat' if legacy else 'principal'}",
                    severity=WARNING, help=f"add {declaration_name}, or remove the directory"))
                continue
            except OSError as error:
                found.errors.append(_problem("catalog-unreadable", f"{relative}/{declaration_name}",
                                             f"cannot inspect {relative}/{declaration_name}: {error.strerror}"))
                continue
            if not stat.S_ISREG(mode):
                what = "a symlink" if stat.S_ISLNK(mode) else "not a regular file"
                found.errors.append(_problem("declaration-not-regular", f"{relative}/{declaration_name}",
                                             f"{relative}/{declaration_name} is {what}; declarations must be real regular files"))
                continue
            yield host_entry.name, entry.name, directory, declaration


def _list(root: Path, directory: Path, relative: str, found: Discovery, missing_ok: bool):
    """Sorted entries of a directory that must be real; ``None`` when it is absent or refused."""
    try:
        mode = os.lstat(directory).st_mode
    except FileNotFoundError:
        if not missing_ok:
            found.errors.append(_problem("catalog-unreadable", relative, f"{relative} vanished during discovery"))
        return None
    except OSError as error:
        found.errors.append(_problem("catalog-unreadable", relative, f"cannot inspect {relative}: {error.strerror}"))
        return None
    if stat.S_ISLNK(mode):
        found.errors.append(_problem("catalog-entry-symlink", relative,
                                     f"{relative} is a symlink; the catalog namespace must be a real directory"))
        return None
    if not stat.S_ISDIR(mode):
        found.errors.append(_problem("catalog-entry-unexpected", relative, f"{relative} is not a directory"))
        return None
    try:
        with os.scandir(directory) as iterator:
            entries = list(iterator)
    except OSError as error:
        found.errors.append(_problem("catalog-unreadable", relative, f"cannot list {relative}: {error.strerror}"))
        return None
    entries.sort(key=lambda entry: entry.name)
    return entries


def _is_real_directory(entry: os.DirEntry, relative: str, found: Discovery, kind: str) -> bool:
    if entry.name in UNSAFE_NAMES:
        found.errors.append(_problem("catalog-entry-unsafe-name", relative,
                                     f"{relative}: `{entry.name}` is not a usable {kind} name"))
        return False
    try:
        if entry.is_symlink():
            found.errors.append(_problem("catalog-entry-symlink", relative,
                                         f"{relative} is a symlink; a {kind} must be a real directory"))
            return False
        if not entry.is_dir(follow_symlinks=False):
            article = "an" if kind[0] in "aeiou" else "a"
            found.errors.append(_problem("catalog-entry-unexpected", shown(relative),
                                         f"{shown(relative)} is not {article} {kind} directory"))
            return False
    except OSError as error:
        found.errors.append(_problem("catalog-unreadable", relative, f"cannot inspect {relative}: {error.strerror}"))
        return False
    problem = refusal(entry.name, kind)  # the grammar (st2/catalog/names.py), with its reason
    if problem is not None:
        safe = shown(relative)
        found.errors.append(_problem("catalog-entry-unsafe-name", safe, f"{safe}: {problem}"))
        return False
    return True


def _is_engine_entry(entry: os.DirEntry) -> bool:
    """A replication engine's own file or directory (never a symlink or special file)."""
    try:
        if entry.is_symlink():
            return False
        if entry.is_dir(follow_symlinks=False):
            return is_engine_file(entry.name, directory=True)
        return entry.is_file(follow_symlinks=False) and is_engine_file(entry.name)
    except OSError:
        return False


def _is_regular_file(entry: os.DirEntry) -> bool:
    try:
        return not entry.is_symlink() and entry.is_file(follow_symlinks=False)
    except OSError:
        return False


def _problem(code: str, source: str, message: str, *, severity: str = ERROR, help: str | None = None) -> Diagnostic:
    return Diagnostic(code=code, severity=severity, layer=CATALOG, source=source, span=None,
                      field_path=None, message=message, help=help)
