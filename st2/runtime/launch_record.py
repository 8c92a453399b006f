"""The launch record: what a backend launched, written before the launch is reported.

``tasks/<runtime-id>.json`` in the runtime scope, JSON ``st2.launch-record.v1``::

    {"schema":"st2.launch-record.v1","runtimeId":…,"kind":"exec"|"pty","pid":…,
     "startTime":…,"createdAt":…,"generationId":…,"argvDigest":…,"launchedAtMs":…,
     "supervisorPid":…,"socket":…|null,"serverPid":…|null,"log":…|null[,"account":…]}

``pid``/``startTime`` name the task's own process (for PTY tasks, the pane's process);
``serverPid`` is the tmux server. ``account`` (present only when the task was launched on a
declared account, its ``ST2_ACCOUNT``) names the account the generation runs on: what its budget
hold judges and what a move compares (st2.accounts). The reader is a pure function of the bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from st2.records.decoding import Malformed, load_object
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.process.identity import ProcessIdentity
from st2.runtime import layout
from st2.runtime.scope import RuntimeScope

SCHEMA = "st2.launch-record.v1"
KINDS = ("exec", "pty")


@dataclass(frozen=True)
class LaunchRecord:
    runtime_id: str
    kind: str
    pid: int
    start_time: float
    created_at: str
    generation_id: str
    argv_digest: str
    launched_at_ms: int
    supervisor_pid: int
    socket: str | None = None
    server_pid: int | None = None
    log: str | None = None
    account: str | None = None

    @property
    def identity(self) -> ProcessIdentity:
        return ProcessIdentity(self.pid, self.start_time)

    def to_json(self) -> bytes:
        body = {
            "schema": SCHEMA,
            "runtimeId": self.runtime_id,
            "kind": self.kind,
            "pid": self.pid,
            "startTime": self.start_time,
            "createdAt": self.created_at,
            "generationId": self.generation_id,
            "argvDigest": self.argv_digest,
            "launchedAtMs": self.launched_at_ms,
            "supervisorPid": self.supervisor_pid,
            "socket": self.socket,
            "serverPid": self.server_pid,
            "log": self.log,
        }
        if self.account is not None:
            body["account"] = self.account
        return json.dumps(body, separators=(",", ":")).encode() + b"\n"


class MalformedRecord(ValueError):
    """The bytes are not a launch record this reader can trust."""


def argv_digest(argv: list[str]) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(argv).encode()).hexdigest()


def parse(data: bytes, runtime_id: str) -> LaunchRecord:
    """Decode a launch record for ``runtime_id``. Raise :class:`MalformedRecord` on anything
    that is not exactly a record of this schema for this runtime id."""
    try:
        body = load_object(data)
    except Malformed as error:
        raise MalformedRecord(f"launch record for {runtime_id} is not JSON") from error
    if not isinstance(body, dict) or body.get("schema") != SCHEMA:
        raise MalformedRecord(f"launch record for {runtime_id} has a foreign schema")
    if body.get("runtimeId") != runtime_id:
        raise MalformedRecord(f"launch record for {runtime_id} names {body.get('runtimeId')!r}")
    try:
        record = LaunchRecord(
            runtime_id=runtime_id,
            kind=_choice(body["kind"], KINDS),
            pid=_positive(body["pid"]),
            start_time=float(body["startTime"]),
            created_at=str(body["createdAt"]),
            generation_id=str(body["generationId"]),
            argv_digest=str(body["argvDigest"]),
            launched_at_ms=int(body["launchedAtMs"]),
            supervisor_pid=int(body["supervisorPid"]),
            socket=body.get("socket"),
            server_pid=body.get("serverPid"),
            log=body.get("log"),
            account=_optional_text(body.get("account")),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise MalformedRecord(f"launch record for {runtime_id} is malformed: {error}") from error
    if record.kind == "pty" and not (isinstance(record.socket, str) and isinstance(record.server_pid, int)):
        raise MalformedRecord(f"launch record for {runtime_id} is a PTY record without its socket")
    return record


def _optional_text(value) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"account {value!r} is not a string")
    return value


def _positive(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"pid {value!r} is not a positive integer")
    return value


def _choice(value, choices) -> str:
    if value not in choices:
        raise ValueError(f"{value!r} is not one of {choices}")
    return value


def read(scope: RuntimeScope, runtime_id: str) -> LaunchRecord | None:
    """The record for ``runtime_id``; None when there is none. Raise :class:`MalformedRecord`
    (also for an unreadable file) so the caller fails closed."""
    return read_path(scope.tasks, runtime_id)


def read_path(tasks, runtime_id: str) -> LaunchRecord | None:
    """:func:`read` for a caller holding only the scope's ``tasks`` directory (a path or string)."""
    path = os.path.join(tasks, f"{runtime_id}.json")
    try:
        data = read_bounded(path, RUNTIME_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise MalformedRecord(f"launch record for {runtime_id} is unreadable: {error}") from error
    return parse(data, runtime_id)


def write(scope: RuntimeScope, record: LaunchRecord) -> None:
    scope.ensure()
    scope.publish(scope.launch_record(record.runtime_id), record.to_json())
    try:  # a relaunch ends the tombstone: the session may be live again
        tombstone(scope, record.runtime_id).unlink()
    except FileNotFoundError:
        pass


def tombstone(scope: RuntimeScope, runtime_id: str) -> Path:
    """``<scope>/stopped/<runtime-id>``: left where a launch record was removed, so a stopped
    task's session reads dead — never live on a harness record written after the stop."""
    return layout.stopped(scope.directory, runtime_id)


def remove(scope: RuntimeScope, runtime_id: str) -> None:
    """Forget ``runtime_id``'s launch record (its task was stopped or is gone) and tombstone it."""
    try:
        scope.launch_record(runtime_id).unlink()
    except FileNotFoundError:
        pass
    marker = tombstone(scope, runtime_id)
    try:
        marker.parent.mkdir(mode=0o700, exist_ok=True)
        marker.touch()
    except FileNotFoundError:  # no scope directory at all: nothing was ever recorded
        pass


def stopped(scope: RuntimeScope, runtime_id: str) -> bool:
    """True when st2 removed ``runtime_id``'s launch record and has not relaunched it since."""
    return os.path.lexists(tombstone(scope, runtime_id))


def recorded_ids(scope: RuntimeScope) -> list[str]:
    """Runtime ids with a launch record (sorted); empty when the scope does not exist."""
    try:
        names = sorted(path.name for path in scope.tasks.iterdir())
    except FileNotFoundError:
        return []
    return [name[: -len(".json")] for name in names if name.endswith(".json") and not name.startswith(".")]
