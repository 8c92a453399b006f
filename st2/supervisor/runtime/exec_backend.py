"""The exec backend: a terminal-free task in its own session and process group.

Output goes to ``<catalog>/logs/<runtime-id>.log``; relaunching keeps exactly one prior
generation as ``.log.1``. Killing a task reaps its whole process group.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import psutil

from st2.clock import SYSTEM_CLOCK, Clock
from st2.supervisor.runtime import transport
from st2.runtime import launch_record
from st2.supervisor.runtime.backend import LaunchError, Observation, RuntimeState, TaskSpec
from st2.process.identity import Liveness, ProcessIdentity, generation_id, liveness
from st2.runtime.launch_record import LaunchRecord
from st2.supervisor.runtime.process_group import kill_group, reap_children
from st2.runtime.scope import RuntimeScope


def rotate_log(log: Path) -> None:
    """Keep the just-finished generation as ``.log.1`` (replacing the older one)."""
    try:
        os.replace(log, log.with_name(log.name + ".1"))
    except FileNotFoundError:
        pass


def remove_logs(log: Path) -> None:
    for path in (log, log.with_name(log.name + ".1")):
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def child_identity(pid: int) -> ProcessIdentity:
    """The identity of a child we just started. Readable even if it already exited: it stays a
    zombie until we reap it."""
    try:
        return ProcessIdentity(pid, psutil.Process(pid).create_time())
    except psutil.Error as error:
        raise LaunchError(f"cannot read the start time of pid {pid}: {error}") from error


class ExecBackend:
    kind = "exec"

    def __init__(self, scope: RuntimeScope, logs: Path, clock: Clock = SYSTEM_CLOCK) -> None:
        self.scope = scope
        self.logs = logs
        self.clock = clock

    def admission_error(self, runtime_id: str) -> str | None:
        return None  # an exec task has no socket or terminal that could never be set up

    def reap(self) -> set[int]:
        """Reap every exited child of this process (exec tasks are our children until reaped)."""
        return set(reap_children())

    def log_path(self, runtime_id: str) -> Path:
        return self.logs / f"{runtime_id}.log"

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        self.scope.ensure()
        self.logs.mkdir(parents=True, exist_ok=True)
        log = self.log_path(spec.runtime_id)
        rotate_log(log)
        descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            process = subprocess.Popen(
                [*transport.prefix(spec.runtime_id), *spec.argv],
                stdin=subprocess.DEVNULL,
                stdout=descriptor,
                stderr=subprocess.STDOUT,
                env=spec.environment or None,
                cwd=spec.directory,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            os.write(descriptor, f"st2: cannot start {list(spec.argv)!r}: {error}\n".encode())
            raise LaunchError(f"{spec.runtime_id}: cannot start {spec.argv[0]!r}: {error}") from error
        finally:
            os.close(descriptor)
        # The child is reaped by the supervisor loop (reap_children), never by this object.
        process.returncode = 0
        identity = child_identity(process.pid)
        record = LaunchRecord(
            runtime_id=spec.runtime_id,
            kind="exec",
            pid=identity.pid,
            start_time=identity.start_time,
            created_at=identity.created_at,
            generation_id=generation_id("exec", spec.runtime_id, identity),
            argv_digest=launch_record.argv_digest(list(spec.argv)),
            launched_at_ms=self.clock.wall_ms(),
            supervisor_pid=os.getpid(),
            log=str(log),
        )
        launch_record.write(self.scope, record)
        return record

    def observe(self, record: LaunchRecord) -> Observation:
        state = liveness(record.identity)
        if state == Liveness.ALIVE:
            return Observation(record.runtime_id, RuntimeState.RUNNING, record)
        if state == Liveness.REUSED:
            return Observation(
                record.runtime_id, RuntimeState.INDETERMINATE, record,
                error=f"{record.runtime_id}: pid {record.pid} now belongs to another process (PID reused)",
                pid_reused=True,
            )
        return Observation(record.runtime_id, RuntimeState.EXITED, record)

    def kill(self, record: LaunchRecord) -> None:
        kill_group(record.identity)
