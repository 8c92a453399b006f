"""Which catalog and which host a command acts on."""

from __future__ import annotations

import os
from collections import namedtuple

from st2.catalog.layout import CatalogPaths, state_home_text

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: the click-free verbs resolve the root as text, without pathlib
    from pathlib import Path


class CatalogLocation(namedtuple("CatalogLocation", ("root", "host"))):
    """A catalog root and the host st2 acts as (a namedtuple class: the send path imports this
    module, and dataclasses cost it milliseconds)."""

    __slots__ = ()
    root: Path
    host: str

    @property
    def paths(self) -> CatalogPaths:
        return CatalogPaths(self.root)


def _default_root_text() -> str:
    return os.path.join(state_home_text(), "st2", "default", "catalog")


def default_catalog_root() -> Path:
    from pathlib import Path

    return Path(_default_root_text())


def catalog_root_text(option: str | None) -> str:
    """``--catalog``, else ``$CATALOG``, else the XDG state default: absolute and normalized, as
    text (the click-free verbs use it and never import pathlib)."""
    value = option or os.environ.get("CATALOG")
    root = os.path.expanduser(value) if value else _default_root_text()
    return os.path.abspath(root)


def resolve_catalog_root(option: str | None) -> Path:
    """:func:`catalog_root_text` as a ``Path``."""
    from pathlib import Path

    return Path(catalog_root_text(option))


def resolve_host(option: str | None) -> str:
    """``--host``, else the short hostname (``uname``'s node name, what ``socket.gethostname``
    returns on POSIX, without importing socket: a tenth of a bare interpreter start)."""
    if option:
        return option
    return os.uname().nodename.split(".")[0]
