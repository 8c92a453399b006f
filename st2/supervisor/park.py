"""Park markers and unpark requests, scoped by catalog and host (the runtime scope).

A marker ``parks/<runtime-id>.json`` (``st2.park-marker.v1``) says the supervisor named in it
gave up restarting the task. It is believable only while that supervisor (PID **and** start
time) is alive and the marker names this exact catalog and host; a marker of a supervisor that
is gone reads as *not parked*, and one that cannot be trusted (malformed, foreign scope) as
indeterminate. ``st2 unpark <runtime-id>`` writes ``unpark/<runtime-id>.json``; the running
supervisor consumes it, clearing exactly that task's park and spent restart budget.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass

from st2.records.decoding import load_object
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.process.identity import Liveness, ProcessIdentity, liveness
from st2.runtime.scope import RuntimeScope

SCHEMA = "st2.park-marker.v1"
REQUEST_SCHEMA = "st2.unpark-request.v1"


@dataclass(frozen=True)
class ParkMarker:
    runtime_id: str
    catalog: str
    host: str
    supervisor: ProcessIdentity
    parked_at_ms: int
    reason: str
    attempts: int
    recoverable: bool = True

    def recovery_argv(self) -> list[str] | None:
        """The exact command that recovers this task, or None when unparking would relaunch into
        the identical failure (an unbindable socket path)."""
        if not self.recoverable:
            return None
        return ["st2", "unpark", "--catalog", self.catalog, "--host", self.host, self.runtime_id]

    def to_json(self) -> bytes:
        body = {
            "schema": SCHEMA,
            "runtimeId": self.runtime_id,
            "catalog": self.catalog,
            "host": self.host,
            "supervisorPid": self.supervisor.pid,
            "supervisorStartTime": self.supervisor.start_time,
            "parkedAtMs": self.parked_at_ms,
            "reason": self.reason,
            "attempts": self.attempts,
            "recoverable": self.recoverable,
        }
        return json.dumps(body, separators=(",", ":")).encode() + b"\n"


class Belief(enum.Enum):
    PARKED = "parked"                # a believable marker
    NOT_PARKED = "not-parked"        # no marker, or its supervisor is gone
    INDETERMINATE = "indeterminate"  # a marker that cannot be trusted


@dataclass(frozen=True)
class ParkReading:
    belief: Belief
    marker: ParkMarker | None = None
    error: str | None = None


def parse(data: bytes, runtime_id: str) -> ParkMarker:
    body = load_object(data)  # Malformed is a ValueError
    if not isinstance(body, dict) or body.get("schema") != SCHEMA or body.get("runtimeId") != runtime_id:
        raise ValueError("not a park marker for this task")
    return ParkMarker(
        runtime_id=runtime_id,
        catalog=str(body["catalog"]),
        host=str(body["host"]),
        supervisor=ProcessIdentity(int(body["supervisorPid"]), float(body["supervisorStartTime"])),
        parked_at_ms=int(body["parkedAtMs"]),
        reason=str(body["reason"]),
        attempts=int(body["attempts"]),
        recoverable=bool(body.get("recoverable", True)),
    )


def read(scope: RuntimeScope, runtime_id: str) -> ParkReading:
    """Read-only: what the park marker of ``runtime_id`` means now."""
    try:
        data = read_bounded(scope.park_marker(runtime_id), RUNTIME_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return ParkReading(Belief.NOT_PARKED)
    except OSError as error:
        return ParkReading(Belief.INDETERMINATE, error=f"park marker of {runtime_id} is unreadable: {error}")
    try:
        marker = parse(data, runtime_id)
    except (ValueError, KeyError, TypeError):
        return ParkReading(Belief.INDETERMINATE, error=f"park marker of {runtime_id} is malformed")
    if marker.catalog != str(scope.catalog) or marker.host != scope.host:
        return ParkReading(Belief.INDETERMINATE, marker,
                           error=f"park marker of {runtime_id} names another catalog or host")
    if liveness(marker.supervisor) != Liveness.ALIVE:
        return ParkReading(Belief.NOT_PARKED, marker)
    return ParkReading(Belief.PARKED, marker)


def believed(scope: RuntimeScope, runtime_id: str) -> tuple[str, int, int] | None:
    """``(reason, parkedAtMs, attempts)`` of a believable park marker of ``runtime_id``, else
    None (the fleet event projection's reader of parks)."""
    reading = read(scope, runtime_id)
    if reading.belief != Belief.PARKED or reading.marker is None:
        return None
    return reading.marker.reason, reading.marker.parked_at_ms, reading.marker.attempts


def write(scope: RuntimeScope, marker: ParkMarker) -> None:
    scope.ensure()
    scope.publish(scope.park_marker(marker.runtime_id), marker.to_json())


def clear(scope: RuntimeScope, runtime_id: str) -> None:
    try:
        scope.park_marker(runtime_id).unlink()
    except FileNotFoundError:
        pass


def request_unpark(scope: RuntimeScope, runtime_id: str, now_ms: int) -> None:
    scope.ensure()
    body = {"schema": REQUEST_SCHEMA, "runtimeId": runtime_id, "requestedAtMs": now_ms}
    scope.publish(scope.unpark_request(runtime_id), json.dumps(body).encode() + b"\n")


def take_unpark_requests(scope: RuntimeScope) -> list[str]:
    """Consume every pending unpark request; return their runtime ids."""
    try:
        entries = sorted(scope.unpark_requests.iterdir())
    except FileNotFoundError:
        return []
    taken = []
    for entry in entries:
        if not entry.name.endswith(".json") or entry.name.startswith("."):
            continue
        runtime_id = entry.name[: -len(".json")]
        try:
            body = load_object(read_bounded(entry, RUNTIME_LIMIT, follow_symlinks=False))
            valid = body.get("schema") == REQUEST_SCHEMA and body.get("runtimeId") == runtime_id
        except (OSError, ValueError, AttributeError):
            valid = False
        entry.unlink(missing_ok=True)
        if valid:
            taken.append(runtime_id)
    return taken
