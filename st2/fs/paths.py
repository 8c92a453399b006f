"""Path arithmetic that keeps its caller's kind of path, so hot paths never import pathlib.

``pathlib``'s import (with ``urllib.parse``, ``ipaddress``, ``fnmatch`` and ``ntpath`` behind it)
cost a per-firing command about 4.8 ms of CPU in a wheel install, half a bare ``python -c pass``
(``python -c "import json"`` 17.8 ms against ``"import json, pathlib"`` 22.6 ms; the
hot-path ratios, before and after, are in docs/memory.md §Third pass: no pathlib, no finalization and
benchmarks/hot_paths.py), so the modules hot paths import compute with ``os.path`` on ``str``
and hand back a path of the kind they were given: a hot path passes ``str`` and gets ``str``; a
caller passing a :class:`pathlib.Path` gets the ``Path`` it always got. Standard library only,
and not pathlib.
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
