"""Which seat a Claude hook or tee writes to, and as which session.

A hook process knows its seat from ``--identity`` (``<host>.<identity>`` as ``$ST_AGENT`` carries
it, or a bare identity on this host) and its catalog from ``--catalog``, else ``$ST_ROOT``, else
``$CATALOG``. It writes as the wrapper's session when the wrapper exported one
(:data:`SESSION_ENV` + :data:`SESSION_SEQ_ENV`); a seat run without the wrapper falls back to
Claude's own ``session_id`` as the token. Standard library only (hot path).
"""

from __future__ import annotations

from collections import namedtuple

from st2.drivers.claude import RUNTIME_ID_ENV, SESSION_ENV, SESSION_SEQ_ENV
from st2.drivers.seat import Seat, SeatNotFound, catalog_root, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Any, Mapping

__all__ = ["Seat", "SeatNotFound", "Session", "catalog_root", "resolve", "session"]


class Session(namedtuple("Session", ("token", "seq", "pty_session", "exported"))):
    """The session a hook writes as: its incarnation token, the claimed ownership sequence when
    the wrapper exported one, and the PTY session its live observations name."""

    __slots__ = ()
    token: str | None
    seq: int | None
    pty_session: str
    exported: bool


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
