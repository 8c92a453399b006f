"""The PTY backend: one tmux server per task, on its own socket under the runtime scope.

The server is started detached (tmux daemonizes into its own session) through the transport
prefix, so it never shares the supervisor's process group or cgroup. The pane runs the task's
argv directly (``sh -c 'exec "$0" "$@"'``), so the pane PID is the task's PID. When the task
exits, its session ends and the server exits with it (tmux defaults: ``remain-on-exit off``,
``exit-empty on``).

Liveness is three facts together: the pane process is alive with its recorded start time, and
the server on the recorded socket answers naming that pane.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from st2.delivery.budget import ACCOUNT_VARIABLE
from st2.runtime.tmux import SESSION_NAME, client_argv
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.supervisor.backends import transport
from st2.runtime import launch_record
from st2.supervisor.backends.backend import LaunchError, Observation, RuntimeState, TaskSpec
from st2.process.identity import Liveness, ProcessIdentity, generation_id, liveness, observe
from st2.runtime.launch_record import LaunchRecord
from st2.supervisor.backends.process_group import kill_group
from st2.runtime.scope import RuntimeScope

TMUX_TIMEOUT_SECONDS = 5.0
EXEC_IN_PLACE = ["/bin/sh", "-c", 'exec "$0" "$@"']


def tmux(socket: Path | str, *arguments: str, environment: dict[str, str] | None = None,
         new_session: bool = False) -> subprocess.CompletedProcess:
    """Run one tmux client command against ``socket`` (never the user's configuration)."""
    return subprocess.run(
        client_argv(socket, *arguments),
        capture_output=True, text=True, env=environment, timeout=TMUX_TIMEOUT_SECONDS,
        start_new_session=new_session, stdin=subprocess.DEVNULL,
    )


def panes(socket: Path | str) -> list[tuple[int, int]] | None:
    """``[(server_pid, pane_pid)]`` from the server on ``socket``; None when it does not answer."""
    if not os.path.exists(socket):
        return None
    try:
        result = tmux(socket, "list-panes", "-a", "-F", "#{pid} #{pane_pid}")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    rows = []
    for line in result.stdout.split("\n"):
        fields = line.split()
        if len(fields) == 2 and all(field.isdigit() for field in fields):
            rows.append((int(fields[0]), int(fields[1])))
    return rows


class TmuxBackend:
    kind = "pty"

    def __init__(self, scope: RuntimeScope, clock: Clock = SYSTEM_CLOCK) -> None:
        self.scope = scope
        self.clock = clock

    def admission_error(self, runtime_id: str) -> str | None:
        return self.scope.socket_admission_error(runtime_id)

    def reap(self) -> set[int]:
        return set()  # tmux daemonizes: its servers are never our children

    def launch(self, spec: TaskSpec) -> LaunchRecord:
        socket = self.scope.socket(spec.runtime_id)
        error = self.scope.socket_admission_error(spec.runtime_id)
        if error is not None:
            raise LaunchError(f"{spec.runtime_id}: {error}")
        self.scope.ensure()
        if panes(socket) is not None:
            raise LaunchError(f"{spec.runtime_id}: a tmux server already answers on {socket}")
        try:
            socket.unlink()  # a stale socket of a server that died
        except FileNotFoundError:
            pass
        environment = dict(spec.environment or os.environ)
        environment.pop("TMUX", None)
        environment.pop("TMUX_PANE", None)
        arguments = ["new-session", "-d", "-s", SESSION_NAME, "-x", "200", "-y", "50"]
        if spec.directory:
            arguments += ["-c", spec.directory]
        for name in sorted(spec.environment or {}):
            if name.startswith(("CATALOG", "ST_")):
                arguments += ["-e", f"{name}={spec.environment[name]}"]
        command = [*transport.prefix(spec.runtime_id), *client_argv(socket, *arguments), *EXEC_IN_PLACE, *spec.argv]
        try:
            started = subprocess.run(command, capture_output=True, text=True, env=environment,
                                     timeout=TMUX_TIMEOUT_SECONDS, start_new_session=True,
                                     stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as failure:
            raise LaunchError(f"{spec.runtime_id}: cannot start tmux: {failure}") from failure
        if started.returncode != 0:
            raise LaunchError(f"{spec.runtime_id}: tmux new-session failed: {started.stderr.strip()}")
        rows = panes(socket)
        if not rows:
            raise LaunchError(f"{spec.runtime_id}: the PTY task exited immediately")
        server_pid, pane_pid = rows[0]
        identity = observe(pane_pid)
        if identity is None:
            raise LaunchError(f"{spec.runtime_id}: the PTY task exited immediately")
        record = LaunchRecord(
            runtime_id=spec.runtime_id,
            kind="pty",
            pid=identity.pid,
            start_time=identity.start_time,
            created_at=identity.created_at,
            generation_id=generation_id("pty", spec.runtime_id, identity),
            argv_digest=launch_record.argv_digest(list(spec.argv)),
            launched_at_ms=self.clock.wall_ms(),
            supervisor_pid=os.getpid(),
            socket=str(socket),
            server_pid=server_pid,
            account=spec.environment.get(ACCOUNT_VARIABLE),  # the declared account it runs on (st2.accounts)
        )
        launch_record.write(self.scope, record)
        return record

    def observe(self, record: LaunchRecord) -> Observation:
        state = liveness(record.identity)
        if state == Liveness.GONE:
            return Observation(record.runtime_id, RuntimeState.EXITED, record)
        if state == Liveness.REUSED:
            return Observation(
                record.runtime_id, RuntimeState.INDETERMINATE, record,
                error=f"{record.runtime_id}: pid {record.pid} now belongs to another process (PID reused)",
                pid_reused=True,
            )
        rows = panes(record.socket)
        if rows is None or all(pane != record.pid for _, pane in rows):
            return Observation(
                record.runtime_id, RuntimeState.VANISHED, record,
                error=f"{record.runtime_id}: pid {record.pid} is alive but no tmux server on {record.socket} names it",
            )
        return Observation(record.runtime_id, RuntimeState.RUNNING, record)

    def kill(self, record: LaunchRecord) -> None:
        if record.socket and panes(record.socket) is not None:
            try:
                tmux(record.socket, "kill-server")
            except (OSError, subprocess.TimeoutExpired):
                pass
        # tmux makes each pane a session leader; reap anything the pane left behind.
        kill_group(record.identity)
        if record.server_pid:
            server = observe(record.server_pid)
            if server is not None and panes(record.socket) is not None:
                kill_group(ProcessIdentity(server.pid, server.start_time))
        if record.socket:
            try:
                os.unlink(record.socket)
            except FileNotFoundError:
                pass


def attach_argv(socket: str) -> list[str]:
    return client_argv(socket, "attach-session", "-t", SESSION_NAME)
