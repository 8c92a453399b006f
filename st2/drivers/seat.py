"""Which seat a driver process serves: ``--identity`` (``<host>.<identity>`` as ``$ST_AGENT``
carries it, or a bare identity on this host) in the catalog from ``--catalog``, else ``$ST_ROOT``,
else ``$CATALOG``. Harness-neutral; standard library only (hooks and tees import it).
"""

from __future__ import annotations

import errno
import os
import stat
from collections import namedtuple

from st2.catalog import layout
from st2.fs.paths import like

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing (or pathlib) costs a hook firing milliseconds
    from pathlib import Path
    from typing import Mapping


class SeatNotFound(LookupError):
    """No seat directory matches the identity in the catalog."""


class Seat(namedtuple("Seat", ("directory", "agent"))):
    __slots__ = ()
    directory: Path | str  # the kind of path the catalog was given as (st2.fs.paths.like)
    agent: str  # <host>.<identity>, the records' ``agent``


def catalog_root(option: str | None, environ: Mapping[str, str]) -> str | None:
    """The catalog directory, absolute and normalized (as ``str(Path(...))`` spells it)."""
    value = option or environ.get("ST_ROOT") or environ.get("CATALOG")
    return os.path.abspath(os.path.expanduser(value)) if value else None


# The errors Path.is_dir() reads as "not a directory" rather than raising.
_ABSENT_ERRORS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _is_real_directory(path: str) -> bool:
    """A directory that is not a symlink (``is_dir() and not is_symlink()``)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError as error:
        if error.errno in _ABSENT_ERRORS:
            return False
        raise


def _short_hostname() -> str:
    """As :func:`st2.catalog.location.resolve_host` reads it (``uname``'s node name)."""
    return os.uname().nodename.split(".")[0]


def resolve(catalog: Path | str | None, identity: str | None) -> Seat:
    """The seat ``identity`` names in ``catalog``, its directory of ``catalog``'s kind (a str
    for a str). Raise :class:`SeatNotFound` with the reason."""
    if catalog is None:
        raise SeatNotFound("no catalog: pass --catalog or set $ST_ROOT / $CATALOG")
    if not identity:
        raise SeatNotFound("no identity: pass --identity or set $ST_AGENT")
    agents = os.path.join(catalog, layout.AGENTS_DIR)

    def found(host: str, name: str) -> Seat | None:
        if not host or not name or "/" in host or "/" in name:
            return None
        directory = os.path.join(agents, host, name)
        return Seat(like(catalog, directory), f"{host}.{name}") if _is_real_directory(directory) else None

    # <host>.<identity> first (what $ST_AGENT carries); the hostname lookup (an import of socket)
    # is paid only for a bare identity.
    seat = found(*identity.split(".", 1)) if "." in identity else None
    seat = seat or found(_short_hostname(), identity)
    if seat is None:
        raise SeatNotFound(f"no seat {identity!r} under {agents}")
    return seat
