"""The opencode wrapper's host-local launch state, ``<runtime scope>/opencode/<runtime-id>/server.json``
(owner-only, never in the catalog, never in an argv), schema ``st2.opencode-server.v1``::

    {"schema":"st2.opencode-server.v1","agent":"<host>.<identity>","runtimeId":"…",
     "port":41234,"password":"<hex>","sessionID":"ses_…"|null,"pid":1234}

``port`` and ``password`` are this launch's (the server's loopback port and its basic-auth
password); ``sessionID`` is the session the seat is bound to, for an operator (and a test) to talk
to the live server. It is written once the server listens, so from a relaunch until then it is
still the previous launch's (a dead port after a kill): a new ``password`` is the new launch. Nothing reads it back: which session a relaunch resumes is the
resumable-session record's (:mod:`st2.runtime.resume`; docs/records.md §Resumable session). Standard library only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from st2.fs.atomic import ensure_directory, publish
from st2.runtime import layout

SCHEMA = "st2.opencode-server.v1"


@dataclass(frozen=True)
class LaunchState:
    port: int | None
    password: str | None
    session_id: str | None
    pid: int | None


def state_path(scope_directory: Path, runtime_id: str) -> Path:
    return layout.opencode_server_record(Path(scope_directory), runtime_id)


def write(path: Path, staging: Path, agent: str, runtime_id: str, state: LaunchState) -> None:
    body = {"schema": SCHEMA, "agent": agent, "runtimeId": runtime_id, "port": state.port,
            "password": state.password, "sessionID": state.session_id, "pid": state.pid}
    ensure_directory(path.parent, mode=0o700)
    ensure_directory(staging, mode=0o700)
    publish(path, (json.dumps(body, separators=(",", ":")) + "\n").encode(), staging, mode=0o600)
