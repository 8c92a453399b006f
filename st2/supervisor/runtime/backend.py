"""The interface both backends implement, and the task specification they launch.

A backend launches a :class:`TaskSpec`, writes its launch record before reporting success,
observes a record's process (PID **and** start time), and kills a task's whole process group.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

from st2.supervisor.runtime.launch_record import LaunchRecord


@dataclass(frozen=True)
class TaskSpec:
    runtime_id: str
    kind: str                        # "exec" | "pty"
    argv: tuple[str, ...]
    environment: dict[str, str] = field(default_factory=dict)
    directory: str | None = None     # working directory; None = the catalog root


class RuntimeState(enum.Enum):
    RUNNING = "running"              # the recorded process is alive with its recorded start time
    EXITED = "exited"                # a record exists but its process is gone
    VANISHED = "vanished"            # the process is alive but its transport no longer answers
    ABSENT = "absent"                # no record at all
    INDETERMINATE = "indeterminate"  # evidence cannot be trusted (malformed, PID reused, …)


@dataclass(frozen=True)
class Observation:
    runtime_id: str
    state: RuntimeState
    record: LaunchRecord | None = None
    error: str | None = None
    # The record's PID now belongs to another process: the recorded process is certainly gone,
    # so it may be replaced, but the evidence itself is not a clean observation.
    pid_reused: bool = False


class LaunchError(RuntimeError):
    """A task could not be started; nothing was recorded."""


class Backend(Protocol):
    kind: str

    def launch(self, spec: TaskSpec) -> LaunchRecord: ...

    def observe(self, record: LaunchRecord) -> Observation: ...

    def kill(self, record: LaunchRecord) -> None: ...
