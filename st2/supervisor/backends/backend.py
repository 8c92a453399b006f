"""The interface both backends implement, and the task specification they launch.

A backend launches a :class:`TaskSpec`, writes its launch record before reporting success,
observes a record's process (PID **and** start time), and kills a task's whole process group.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Protocol

from st2.runtime.launch_record import LaunchRecord


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
    """What the reconciler asks of a task backend, and all it asks: the reconciler reaches
    processes, terminals and signals only through these methods, so its rules run against a
    fake (tests/supervisor/test_reconcile_rules.py)."""

    kind: str

    def admission_error(self, runtime_id: str) -> str | None:
        """None when a task of this backend could ever start under ``runtime_id``; otherwise
        why it never could (a structural refusal: relaunching repeats the same failure)."""
        ...

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        """Start ``spec`` and write its launch record before returning it. Raise
        :class:`LaunchError` when nothing was started (and nothing recorded)."""
        ...

    def observe(self, record: LaunchRecord) -> Observation:
        """What ``record``'s process is now (PID **and** start time, plus the transport)."""
        ...

    def kill(self, record: LaunchRecord) -> None:
        """Kill ``record``'s task and its whole process group."""
        ...

    def reap(self) -> set[int]:
        """Collect exited children this backend started; return their PIDs."""
        ...
