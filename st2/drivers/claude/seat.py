"""Which seat a Claude hook or tee writes to, and as which session.

A hook process knows its seat from ``--identity`` (``<host>.<identity>`` as ``$ST_AGENT`` carries
it, or a bare identity on this host) and its catalog from ``--catalog``, else ``$ST_ROOT``, else
``$CATALOG``. It writes as the wrapper's session when the wrapper exported one
(:data:`SESSION_ENV` + :data:`SESSION_SEQ_ENV`); a seat run without the wrapper falls back to
Claude's own ``session_id`` as the token. Standard library only (hot path).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from st2.catalog import layout
from st2.drivers.claude import RUNTIME_ID_ENV, SESSION_ENV, SESSION_SEQ_ENV


class SeatNotFound(LookupError):
    """No seat directory matches the identity in the catalog."""


class Seat(NamedTuple):
    directory: Path
    agent: str          # <host>.<identity>, the records' ``agent``


class Session(NamedTuple):
    """The session a hook writes as: its incarnation token, the claimed ownership sequence when
    the wrapper exported one, and the PTY session its live observations name."""

    token: str | None
    seq: int | None
    pty_session: str
    exported: bool


def catalog_root(option: str | None, environ: Mapping[str, str]) -> Path | None:
    value = option or environ.get("ST_ROOT") or environ.get("CATALOG")
    return Path(os.path.abspath(os.path.expanduser(value))) if value else None


def _short_hostname() -> str:
    import socket

    return socket.gethostname().split(".")[0]


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


def session(environ: Mapping[str, str], payload: Any, seat: Seat, runtime_id: str | None = None) -> Session:
    """The session a hook process writes as (see the module docstring)."""
    pty_session = runtime_id or environ.get(RUNTIME_ID_ENV) or seat.agent
    token = environ.get(SESSION_ENV) or None
    if token is not None:
        seq_text = environ.get(SESSION_SEQ_ENV, "")
        seq = int(seq_text) if seq_text.isascii() and seq_text.isdigit() else None
        return Session(token, seq, pty_session, True)
    session_id = payload.get("session_id") if isinstance(payload, dict) else None
    if isinstance(session_id, str) and session_id:
        return Session(f"claude-session-{session_id}", None, pty_session, False)
    return Session(None, None, pty_session, False)
