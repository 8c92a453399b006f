"""Which catalog and which host a command acts on."""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from st2.catalog.layout import CatalogPaths, state_home


class CatalogLocation(namedtuple("CatalogLocation", ("root", "host"))):
    """A catalog root and the host st2 acts as (a namedtuple class: the send path imports this
    module, and dataclasses cost it milliseconds)."""

    __slots__ = ()
    root: Path
    host: str

    @property
    def paths(self) -> CatalogPaths:
        return CatalogPaths(self.root)


def default_catalog_root() -> Path:
    return state_home() / "st2" / "default" / "catalog"


def resolve_catalog_root(option: str | None) -> Path:
    """``--catalog``, else ``$CATALOG``, else the XDG state default. Returned absolute."""
    value = option or os.environ.get("CATALOG")
    root = Path(value).expanduser() if value else default_catalog_root()
    return Path(os.path.abspath(root))


def resolve_host(option: str | None) -> str:
    """``--host``, else the short hostname (``uname``'s node name, what ``socket.gethostname``
    returns on POSIX, without importing socket: a tenth of a bare interpreter start)."""
    if option:
        return option
    return os.uname().nodename.split(".")[0]
