"""Path arithmetic that keeps its caller's kind of path, so hot paths never import pathlib.

Importing ``pathlib`` (with ``urllib.parse``, ``ipaddress``, ``fnmatch`` and ``ntpath`` behind it)
costs a per-firing command a large share of a bare interpreter start (docs/memory.md §Third pass:
no pathlib, no finalization), so the modules hot paths import compute with ``os.path`` on ``str``
and hand back a path of the kind they were given: a caller passing ``str`` gets ``str``; a caller
passing a :class:`pathlib.Path` gets a ``Path``. Standard library only, and not pathlib.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from typing import TypeVar

    P = TypeVar("P", str, os.PathLike)


def like(template: P, path: str) -> P:
    """``path`` (a str) as ``template``'s kind: a ``str`` template gives the ``str`` itself, any
    other (a ``pathlib`` path) an instance of the template's own type."""
    return path if isinstance(template, str) else type(template)(path)
