"""The files a replication engine makes inside a catalog it carries: never st2's records.

Syncthing keeps ``.stfolder`` (its folder marker) and ``.stversions`` (file versioning), writes a
file as ``.syncthing.<name>.tmp`` (``~syncthing~<name>.tmp`` on Windows) before renaming it in,
and keeps the losing side of a concurrent edit as a conflict copy
``<stem>.sync-conflict-<YYYYMMDD>-<HHMMSS>-<device><ext>``. unison stages as ``.unison.*``;
rsync stages as ``.<name>.<6 random characters>`` beside the file, or in ``.~tmp~/`` under
``--delay-updates``.

Every reader and strict discovery overlooks these names (:func:`is_engine_file`); Doctor names
the conflict copies (:func:`is_conflict_copy`, :func:`conflict_original`), and validate refuses
one of a declaration. :data:`ENGINE_GLOBS` is what the sync rules exclude in every format.
Standard library only.
"""

from __future__ import annotations

import fnmatch
import re

# Excluded by the sync rules of every engine (an engine's own debris never crosses hosts, even
# when the catalog was once carried by another engine).
ENGINE_GLOBS: tuple[str, ...] = (
    ".stfolder",
    ".stversions",
    ".syncthing.*.tmp",
    "~syncthing~*.tmp",
    "*.sync-conflict-*",
    ".unison.*",
    ".~tmp~",
)

# The engine's markers: never carried, never deleted to make way for a directory removal.
ENGINE_MARKERS: tuple[str, ...] = (".stfolder", ".stversions")

_CONFLICT = re.compile(r"(?P<stem>.*?)\.sync-conflict-[0-9]{8}-[0-9]{6}(?:-[A-Z0-9]{7})?(?P<ext>\.[^.]*)?")
# rsync's in-place temporary: a dot, the destination name, a dot, six characters of mkstemp.
_RSYNC_TEMP = re.compile(r"\..+\.[A-Za-z0-9]{6}")


# The ones an engine makes as directories: its markers, rsync's --delay-updates directory and
# unison's copy of a directory in flight. A conflict copy or a staged file is always a file.
ENGINE_DIRECTORY_GLOBS: tuple[str, ...] = (".stfolder", ".stversions", ".~tmp~", ".unison.*")


# Each glob list as one pattern (fnmatch.fnmatchcase over each, in one match): discovery asks of
# every entry it lists, twice per seat, and seven fnmatch calls a name were a fifth of the walk.
_ENGINE_FILE = re.compile("|".join(fnmatch.translate(glob) for glob in ENGINE_GLOBS))
_ENGINE_DIRECTORY = re.compile("|".join(fnmatch.translate(glob) for glob in ENGINE_DIRECTORY_GLOBS))


def is_engine_file(name: str, directory: bool = False) -> bool:
    """True when the entry ``name`` (one path component; ``directory`` when it is one) is a
    replication engine's, not st2's."""
    if directory:
        return _ENGINE_DIRECTORY.match(name) is not None
    if _ENGINE_FILE.match(name) is not None:
        return True
    return _RSYNC_TEMP.fullmatch(name) is not None


def is_conflict_copy(name: str) -> bool:
    """True when ``name`` is a Syncthing conflict copy (the loser of a concurrent edit)."""
    return ".sync-conflict-" in name


def conflict_original(name: str) -> str | None:
    """The name a conflict copy ``name`` was made of (``agent.sync-conflict-…-ABCDEFG.kdl`` ->
    ``agent.kdl``), or None when ``name`` is not one in Syncthing's exact form."""
    match = _CONFLICT.fullmatch(name)
    if match is None:
        return None
    return match.group("stem") + (match.group("ext") or "")
