"""The same-host PTY liveness probe the roster hands the harness-state reader (seed 004 §D).

A live observed state names the PTY session that wrote it. On the supervisor's own host the
session's launch record (``<runtime state>/scopes/<catalog-digest>/<host>/tasks/<id>.json``)
names the process and its start time; when that process is gone or its PID now belongs to
another process, the session is provably dead and the state reads ``unknown(session-dead)``.
Anything short of proof — no launch record, an unreadable one, no /proc — is indeterminate and
downgrades nothing. Standard library only: the roster must not import the supervisor.
"""

from __future__ import annotations

import hashlib
import json
import os

from st2.catalog.layout import runtime_state_dir
from st2.process import proc_stat

ALIVE, DEAD, INDETERMINATE = "alive", "dead", "indeterminate"
LAUNCH_RECORD_SCHEMA = "st2.launch-record.v1"
# The supervisor records start times as boot time + start ticks / CLK_TCK in float seconds.
START_TIME_TOLERANCE_SECONDS = 0.02


class SessionProbe:
    """``probe(pty_session) -> alive | dead | indeterminate`` for one catalog on this host."""

    def __init__(self, catalog_root: str, host: str) -> None:
        digest = hashlib.sha256(os.path.abspath(catalog_root).encode()).hexdigest()[:12]
        self.tasks = os.path.join(os.fspath(runtime_state_dir()), "scopes", digest, host, "tasks")
        self.host = host

    def __call__(self, pty_session: str) -> str:
        if not pty_session.startswith(self.host + ".") or "/" in pty_session:
            return INDETERMINATE  # another host's session: no local evidence either way
        try:
            with open(os.path.join(self.tasks, pty_session + ".json"), "rb") as handle:
                record = json.loads(handle.read())
            if record.get("schema") != LAUNCH_RECORD_SCHEMA or record.get("runtimeId") != pty_session:
                return INDETERMINATE
            pid, recorded_start = record["pid"], float(record["startTime"])
            if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
                return INDETERMINATE
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return INDETERMINATE
        try:
            stat = proc_stat.read(pid)
            if stat is None or not stat.running:
                return DEAD
            current = proc_stat.start_time_seconds(stat.start_ticks)
        except proc_stat.ProcUnavailable:
            return INDETERMINATE
        if abs(current - recorded_start) > START_TIME_TOLERANCE_SECONDS:
            return DEAD
        return ALIVE
