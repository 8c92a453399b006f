"""Which seat a driver process serves: ``--identity`` (``<host>.<identity>`` as ``$ST_AGENT``
carries it, or a bare identity on this host) in the catalog from ``--catalog``, else ``$ST_ROOT``,
else ``$CATALOG``. Harness-neutral; standard library only (hooks and tees import it).
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

from st2.catalog import layout

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Mapping


class SeatNotFound(LookupError):
    """No seat directory matches the identity in the catalog."""


class Seat(namedtuple("Seat", ("directory", "agent"))):
    __slots__ = ()
    directory: Path
    agent: str  # <host>.<identity>, the records' ``agent``


def catalog_root(option: str | None, environ: Mapping[str, str]) -> Path | None:
    value = option or environ.get("ST_ROOT") or environ.get("CATALOG")
    return Path(os.path.abspath(os.path.expanduser(value))) if value else None


def _short_hostname() -> str:
    """As :func:`st2.catalog.location.resolve_host` reads it (``uname``'s node name)."""
    return os.uname().nodename.split(".")[0]


def resolve(catalog: Path | None, identity: str | None) -> Seat:
    """The seat ``identity`` names in ``catalog``. Raise :class:`SeatNotFound` with the reason."""
    if catalog is None:
        raise SeatNotFound("no catalog: pass --catalog or set $ST_ROOT / $CATALOG")
    if not identity:
        raise SeatNotFound("no identity: pass --identity or set $ST_AGENT")
    agents = catalog / layout.AGENTS_DIR
    def found(host: str, name: str) -> Seat | None:
        if not host or not name or "/" in host or "/" in name:
            return None
        directory = agents / host / name
        return Seat(directory, f"{host}.{name}") if directory.is_dir() and not directory.is_symlink() else None

    # <host>.<identity> first (what $ST_AGENT carries); the hostname lookup (an import of socket)
    # is paid only for a bare identity.
    seat = found(*identity.split(".", 1)) if "." in identity else None
    seat = seat or found(_short_hostname(), identity)
    if seat is None:
        raise SeatNotFound(f"no seat {identity!r} under {agents}")
    return seat
