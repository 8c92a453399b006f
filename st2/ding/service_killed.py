"""The heartbeat's kill record: ``<scope>/ding-service.killed``, the last DING service a stub's
heartbeat SIGKILLed (:mod:`st2.ding.stub`, *The heartbeat*).

The killing stub publishes it (atomically; not fsynced: it only has to outlive processes, not the
host) just before it signals, so every other stub, which sees only its connection end, finds it
on reading its service's identity there and says in its own log why it now serves its seat
itself; ``st2 doctor`` then repeats that line. One JSON object::

    {"schema": "st2.ding-service-killed.v1", "pid": 123, "startTicks": 456, "by": 789,
     "boundSeconds": 10.0}

``pid`` and ``startTicks`` name the killed service (a later process reusing the PID is not it),
``by`` the stub that killed it, ``boundSeconds`` how long its ping went unanswered. A record that
cannot be read as this schema reads as None (the stub then says only that its service is gone).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from st2.fs.atomic import publish
from st2.fs.read import RUNTIME_LIMIT, read_optional
from st2.records.decoding import Malformed, load_object, optional_number, unsigned
from st2.runtime import layout

SCHEMA = "st2.ding-service-killed.v1"


@dataclass(frozen=True)
class Killed:
    pid: int
    start_ticks: int
    by: int
    bound_seconds: float

    def says(self) -> str:
        """The reason a stub of the killed service gives for serving its seat itself."""
        return (f"the DING service (pid {self.pid}) did not answer its heartbeat within {self.bound_seconds:g}s and "
                f"was SIGKILLed by pid {self.by}")


def path(scope_directory: Path) -> Path:
    return layout.ding_service_killed(Path(scope_directory))


def write(scope_directory: Path, killed: Killed) -> Killed:
    """Publish ``killed`` unless the record already names the same service: the first stub to
    kill it stays its killer (a second stub, its ping unanswered as the first one's kill lands,
    would otherwise name itself though its own log saw the service already dying). Return the
    record that stands."""
    standing = read(scope_directory)
    if names(standing, killed.pid, killed.start_ticks):
        return standing
    body = {"schema": SCHEMA, "pid": killed.pid, "startTicks": killed.start_ticks, "by": killed.by,
            "boundSeconds": killed.bound_seconds}
    publish(path(scope_directory), json.dumps(body, separators=(",", ":")).encode() + b"\n",
            Path(scope_directory), mode=0o600, durable=False)
    return killed


def read(scope_directory: Path) -> Killed | None:
    """The record, or None when there is none or it is not this schema."""
    try:
        data = read_optional(path(scope_directory), RUNTIME_LIMIT, follow_symlinks=False)
        if data is None:
            return None
        body = load_object(data)
        if body.get("schema") != SCHEMA:
            return None
        bound = optional_number(body, "boundSeconds")
        return Killed(unsigned(body, "pid"), unsigned(body, "startTicks"), unsigned(body, "by"),
                      bound if bound is not None else 0.0)
    except (OSError, Malformed):
        return None


def names(killed: Killed | None, pid: int | None, start_ticks: int | None) -> bool:
    """Whether ``killed`` is the service ``pid`` started at ``start_ticks``."""
    return killed is not None and killed.pid == pid and killed.start_ticks == start_ticks
