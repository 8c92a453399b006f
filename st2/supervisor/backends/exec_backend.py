"""The exec backend: a terminal-free task in its own session and process group.

Output goes to ``<catalog>/logs/<runtime-id>.log``; relaunching keeps exactly one prior
generation as ``.log.1``. Killing a task reaps its whole process group.

A forkable task (this st2 run as ``st2 ding …`` or as a built-in provider runtime, ``st2
resource-runtime …``, see :data:`FORKABLE_VERBS`; a catalog-declared provider's own argv is not)
is forked by the scope's seat host (:mod:`st2.seathost`) when one of this build answers, instead
of spawned: the same separate process in its own session and group, with the same log, directory
and environment, recorded in the same launch record (PID, start time, generation, argv digest of
the declared argv), killed and adopted by that record — only its pages are shared, and its
``/proc/<pid>/cmdline`` is the seat host's (find it by its launch record, never by cmdline).
Without a seat host (``ST2_SEAT_HOST=off``, or none comes up) it is spawned like every other task.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


from st2.delivery.budget import ACCOUNT_VARIABLE
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.fs.log import open_log
from st2.supervisor.backends import transport
from st2.runtime import launch_record
from st2.supervisor.backends.backend import LaunchError, Observation, RuntimeState, TaskSpec
from st2.process.identity import Liveness, ProcessIdentity, generation_id, liveness
from st2.process import proc_stat
from st2.runtime.launch_record import LaunchRecord
from st2.supervisor.backends.process_group import kill_group, reap_children
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
    zombie, with its ``/proc`` entry, until we reap it. Its start time is reckoned from the boot
    time every st2 process shares (:func:`st2.process.proc_stat.boot_time`); psutil, imported only
    where ``/proc`` cannot answer, reckons from the kernel's own."""
    try:
        stat = proc_stat.read(pid)
    except proc_stat.ProcUnavailable:
        import psutil

        try:
            return ProcessIdentity(pid, psutil.Process(pid).create_time())
        except psutil.Error as error:
            raise LaunchError(f"cannot read the start time of pid {pid}: {error}") from error
    if stat is None:
        raise LaunchError(f"cannot read the start time of pid {pid}: no such process")
    return ProcessIdentity(pid, proc_stat.start_time_seconds(stat.start_ticks))


FORKABLE_VERBS = ("ding", "resource-runtime")


def forkable_words(argv: tuple[str, ...], command: list[str]) -> list[str] | None:
    """The st2 words of ``argv`` when it runs this st2 (``command``) with a forkable verb."""
    count = len(command)
    if len(argv) > count and list(argv[:count]) == command and argv[count] in FORKABLE_VERBS:
        return list(argv[count:])
    return None


class ExecBackend:
    kind = "exec"

    def __init__(self, scope: RuntimeScope, logs: Path, clock: Clock = SYSTEM_CLOCK, seat_host=None,
                 st2_command: list[str] | None = None) -> None:
        """``seat_host`` (a :class:`st2.seathost.client.SeatHostClient`) forks the tasks that
        run ``st2_command`` with a forkable verb; None spawns every task."""
        self.scope = scope
        self.logs = logs
        self.clock = clock
        self.seat_host = seat_host
        self.st2_command = st2_command or []

    def admission_error(self, runtime_id: str) -> str | None:
        return None  # an exec task has no socket or terminal that could never be set up

    def reap(self) -> set[int]:
        """Reap every exited child of this process (exec tasks are our children until reaped)."""
        return set(reap_children())

    def log_path(self, runtime_id: str) -> Path:
        return self.logs / f"{runtime_id}.log"

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        self.scope.ensure()
        log = self.log_path(spec.runtime_id)
        rotate_log(log)
        descriptor = open_log(log, truncate=True)
        try:
            forked = self._fork(spec, descriptor)
            if forked is not None:
                return self._record(spec, log, forked)
            process = self._spawn(spec, descriptor)
        finally:
            os.close(descriptor)
        # The child is reaped by the supervisor loop (reap_children), never by this object.
        process.returncode = 0
        return self._record(spec, log, child_identity(process.pid))

    def _fork(self, spec: TaskSpec, log: int) -> ProcessIdentity | None:
        """The identity of ``spec`` forked by the seat host; None when it is not forkable or no
        host serves (the caller spawns it)."""
        words = forkable_words(spec.argv, self.st2_command) if self.seat_host is not None else None
        if words is None:
            return None
        forked = self.seat_host.fork(words, dict(spec.environment or os.environ), spec.directory or os.getcwd(), log)
        if forked is None:
            return None
        pid, ticks = forked
        return ProcessIdentity(pid, proc_stat.start_time_seconds(ticks))

    def _spawn(self, spec: TaskSpec, log: int) -> subprocess.Popen:
        try:
            return subprocess.Popen(
                [*transport.prefix(spec.runtime_id), *spec.argv],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=spec.environment or None,
                cwd=spec.directory,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as error:
            os.write(log, f"st2: cannot start {list(spec.argv)!r}: {error}\n".encode())
            raise LaunchError(f"{spec.runtime_id}: cannot start {spec.argv[0]!r}: {error}") from error

    def _record(self, spec: TaskSpec, log: Path, identity: ProcessIdentity) -> LaunchRecord:
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
            account=spec.environment.get(ACCOUNT_VARIABLE),  # the declared account it runs on (st2.accounts)
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
