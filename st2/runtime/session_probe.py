"""The same-host PTY liveness probe the roster hands the harness-state reader (docs/records.md §Harness state).

A live observed state names the PTY session that wrote it. On the supervisor's own host the
session's launch record (:mod:`st2.runtime.launch_record`) names the process and its start time;
when that process is gone or its PID now belongs to another process, the session is provably
dead and the state reads ``unknown(session-dead)``. Anything short of proof — no launch record,
a malformed or unreadable one, another host's session — is indeterminate and downgrades nothing.
"""

from __future__ import annotations

from pathlib import Path

from st2.process.identity import Liveness, liveness
from st2.runtime import launch_record
from st2.runtime.scope import RuntimeScope

ALIVE, DEAD, INDETERMINATE = "alive", "dead", "indeterminate"


class SessionProbe:
    """``probe(pty_session) -> alive | dead | indeterminate`` for one catalog on this host."""

    def __init__(self, catalog_root: str, host: str, state_dir: Path | None = None) -> None:
        self.scope = RuntimeScope(Path(catalog_root), host, state_dir)
        self.host = host

    @property
    def session_store(self):
        """This catalog's resumable-session store on this host (:mod:`st2.runtime.resumable_session`),
        found once per probe: the roster reads every seat's record through it."""
        store = self.__dict__.get("_session_store")
        if store is None:
            from st2.runtime.resumable_session import SessionStore

            store = self.__dict__["_session_store"] = SessionStore.beside(self.scope.directory)
        return store

    def __call__(self, pty_session: str) -> str:
        if not pty_session.startswith(self.host + ".") or "/" in pty_session:
            return INDETERMINATE  # another host's session: no local evidence either way
        try:
            record = launch_record.read(self.scope, pty_session)
        except launch_record.MalformedRecord:
            return INDETERMINATE
        if record is None:
            # No record proves nothing, unless st2 itself stopped the session (`st2 down`, a
            # retirement): its tombstone proves the session dead, whatever a harness wrote after.
            return DEAD if launch_record.stopped(self.scope, pty_session) else INDETERMINATE
        return ALIVE if liveness(record.identity) == Liveness.ALIVE else DEAD
