"""Which supervisor process runs a catalog on a host: ``supervisor.json`` in the runtime scope,
naming its PID and process start time. Park markers name the same identity, so a marker left
by a supervisor that is gone reads as not parked."""

from __future__ import annotations

import json
import os

from st2.records.decoding import load_object
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.process.identity import Liveness, ProcessIdentity, liveness, observe
from st2.runtime import layout
from st2.runtime.scope import RuntimeScope

SCHEMA = "st2.supervisor.v1"


def path(scope: RuntimeScope):
    return layout.supervisor_record(scope.directory)


def own_identity() -> ProcessIdentity:
    identity = observe(os.getpid())
    assert identity is not None
    return identity


def write(scope: RuntimeScope, identity: ProcessIdentity, started_at_ms: int) -> None:
    scope.ensure()
    body = {"schema": SCHEMA, "pid": identity.pid, "startTime": identity.start_time,
            "startedAtMs": started_at_ms}
    scope.publish(path(scope), json.dumps(body, separators=(",", ":")).encode() + b"\n")


def read(scope: RuntimeScope) -> ProcessIdentity | None:
    try:
        body = load_object(read_bounded(path(scope), RUNTIME_LIMIT, follow_symlinks=False))
        if body.get("schema") != SCHEMA:
            return None
        return ProcessIdentity(int(body["pid"]), float(body["startTime"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def running(scope: RuntimeScope) -> ProcessIdentity | None:
    """The live supervisor of this scope, or None."""
    identity = read(scope)
    if identity is not None and liveness(identity) == Liveness.ALIVE:
        return identity
    return None
