"""``st2 driver claude-session --identity I --runtime-id R -- claude …``: the Claude wrapper, the
command inside a Claude seat's PTY task (seed 004 §D; seed 003 "Observed harness state
discipline", "Agent-declared presence").

Lifecycle, one transition function over :class:`Phase`:

- STARTING → RUNNING: claim the session (the written harness-state claim under a fresh token,
  which also removes ``harness-context`` so a reader sees "no context yet" rather than the
  previous incarnation's fill), refresh presence, spawn ``claude`` in this PTY and in this
  process group (it must stay the terminal's foreground group to read the keyboard), exporting
  the token, the claimed sequence and the runtime id so every hook writes as this session.
- RUNNING: poll the child every :data:`POLL_SECONDS`; refresh presence every
  ``STATUS_REFRESH`` (5 min) and re-stamp this session's observed state when its refresh is due,
  while — and only while — Claude lives.
- RUNNING → STOPPING on SIGTERM/SIGHUP (handlers only enqueue; the loop acts): signal the group
  with SIGTERM and give Claude :data:`STOP_GRACE_SECONDS` to exit.
- → ENDED when Claude is reaped: write the terminal ``ended`` record carrying the real exit
  (``exit 0``, ``signal 15``) and exit with Claude's status.
- STOPPING past the grace: write ``ended`` / ``signal 9`` first — the escalation cover, landed
  before the SIGKILL because a kill of the whole group could not be followed by any write — then
  SIGKILL Claude alone, reap it, and rewrite from the reap if the real status differs.

Limits, stated (seed 004 §D): a SIGKILL of the wrapper itself (an external forced kill, the
supervisor's own group escalation, ``tmux kill-server`` followed by a kill of the pane's group
inside our grace) runs no code here, so no terminal record is written; the reader's PTY liveness
cross-check and the staleness horizon are the only fallback. The supervisor's stop escalates after
3 s, so :data:`STOP_GRACE_SECONDS` is kept below it.
"""

from __future__ import annotations

import enum
import os
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path

from st2.drivers.claude import HARNESS, RUNTIME_ID_ENV, SESSION_ENV, SESSION_SEQ_ENV
from st2.drivers.claude.seat import Seat
from st2.records import harness_state, status

POLL_SECONDS = 0.25
STOP_GRACE_SECONDS = 2.0
HEARTBEAT_CHECK_SECONDS = 30.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Phase(enum.Enum):
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    ENDED = "ended"


# Allowed edges, named: the loop asks transition() and never assigns a phase directly.
EDGES = {
    (Phase.STARTING, "spawned"): Phase.RUNNING,       # STARTING -> RUNNING
    (Phase.STARTING, "spawn-failed"): Phase.ENDED,    # STARTING -> ENDED (exit 127)
    (Phase.RUNNING, "stop-requested"): Phase.STOPPING,  # RUNNING -> STOPPING
    (Phase.RUNNING, "reaped"): Phase.ENDED,           # RUNNING -> ENDED
    (Phase.STOPPING, "reaped"): Phase.ENDED,          # STOPPING -> ENDED
    (Phase.STOPPING, "grace-expired"): Phase.ENDED,   # STOPPING -> ENDED (escalation cover)
}


def transition(phase: Phase, event: str) -> Phase:
    """The one transition function. Raise ValueError for an edge the machine does not have."""
    try:
        return EDGES[(phase, event)]
    except KeyError:
        raise ValueError(f"no edge from {phase.value} on {event!r}") from None


def _st2_bin_directory() -> str | None:
    """The directory of the ``st2`` executable this process runs as, so Claude's hook scripts
    (which call ``st2`` from PATH) reach the same installation."""
    invoked = sys.argv[0] if sys.argv else ""
    if os.path.basename(invoked) == "st2" and os.path.isfile(invoked):
        return os.path.dirname(os.path.abspath(invoked))
    beside = os.path.join(os.path.dirname(sys.executable), "st2")
    return os.path.dirname(beside) if os.path.isfile(beside) and os.access(beside, os.X_OK) else None


def claude_environment(base: dict[str, str], runtime_id: str, token: str, seq: int) -> dict[str, str]:
    environment = dict(base)
    environment[RUNTIME_ID_ENV] = runtime_id
    environment[SESSION_ENV] = token
    environment[SESSION_SEQ_ENV] = str(seq)
    directory = _st2_bin_directory()
    if directory:
        path = environment.get("PATH", os.defpath)
        if path.split(os.pathsep)[0] != directory:
            environment["PATH"] = directory + os.pathsep + path
    return environment


def _say(message: str) -> None:
    """Diagnostics go to stderr, which is the PTY; once the terminal is gone that may fail."""
    try:
        sys.stderr.write(f"st2 claude-session: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def returncode_status(returncode: int) -> int:
    """The wrapper's own exit status for Claude's return code (128 + n for signal n)."""
    return 128 - returncode if returncode < 0 else returncode


class ClaudeSession:
    """One run of Claude under the wrapper. ``clock`` is the time seam (wall stamps for records,
    monotonic for the cadences)."""

    def __init__(self, seat: Seat, runtime_id: str, claude_argv: list[str], clock,
                 environment: dict[str, str] | None = None, stop_grace: float = STOP_GRACE_SECONDS) -> None:
        if not claude_argv:
            raise ValueError("no claude argv after --")
        self.seat = seat
        self.runtime_id = runtime_id
        self.claude_argv = list(claude_argv)
        self.clock = clock
        self.environment = dict(os.environ if environment is None else environment)
        self.stop_grace = stop_grace
        self.phase = Phase.STARTING
        self.requests: deque[int] = deque()
        self.child: subprocess.Popen | None = None
        self.writer: harness_state.Writer | None = None

    # Signal handlers only record; the loop acts.
    def _enqueue(self, number: int, frame) -> None:
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        for number in STOP_SIGNALS:
            signal.signal(number, self._enqueue)
        # ^C reaches the whole foreground group; it is Claude's key, never the wrapper's end. A
        # Python handler (not SIG_IGN, which exec would pass on to Claude) keeps us running.
        signal.signal(signal.SIGINT, lambda number, frame: None)

    def _step(self, event: str) -> None:
        self.phase = transition(self.phase, event)

    def start(self) -> None:
        token = harness_state.session_token()
        seq = harness_state.claim(self.seat.directory, self.seat.agent, HARNESS, token, self.clock)
        self.writer = harness_state.Writer(self.seat.directory, self.seat.agent, HARNESS, self.clock,
                                           pty_session=self.runtime_id, incarnation=token, claimed_seq=seq)
        self._refresh_presence()
        try:
            self.child = subprocess.Popen(self.claude_argv,
                                          env=claude_environment(self.environment, self.runtime_id, token, seq))
        except OSError as error:
            _say(f"cannot start {self.claude_argv[0]!r}: {error.strerror or error}")
            self._step("spawn-failed")
            self.writer.ended("exit 127")
            raise
        self._step("spawned")

    def _refresh_presence(self) -> None:
        try:
            status.refresh(self.seat.directory, self.clock)
        except Exception as error:  # presence is best effort; the session goes on
            _say(f"presence refresh failed: {error}")

    def _end(self, returncode: int) -> int:
        self._step("reaped")
        self.writer.ended(harness_state.exit_description(returncode))
        return returncode_status(returncode)

    def run(self) -> int:
        """Run until Claude is reaped; return the wrapper's exit status."""
        if self.phase is Phase.STARTING:
            self.start()
        next_presence = self.clock.monotonic() + status.STATUS_REFRESH_MS / 1000
        next_heartbeat = self.clock.monotonic() + HEARTBEAT_CHECK_SECONDS
        while True:
            returncode = self.child.poll()
            if returncode is not None:
                return self._end(returncode)
            if self.requests:
                self.requests.clear()
                return self._stop()
            now = self.clock.monotonic()
            if now >= next_presence:
                self._refresh_presence()
                next_presence = now + status.STATUS_REFRESH_MS / 1000
            if now >= next_heartbeat:
                try:
                    self.writer.heartbeat()
                except Exception as error:
                    _say(f"observed-state heartbeat failed: {error}")
                next_heartbeat = now + HEARTBEAT_CHECK_SECONDS
            self.clock.sleep(POLL_SECONDS)

    def _stop(self) -> int:
        self._step("stop-requested")
        try:
            if os.getpgrp() == os.getpid():
                # We lead the PTY's group: Claude and its tools hear it; ours is only enqueued.
                os.killpg(os.getpgrp(), signal.SIGTERM)
            else:  # never signal a group we do not lead
                self.child.terminate()
        except OSError:
            pass
        deadline = self.clock.monotonic() + self.stop_grace
        while self.clock.monotonic() < deadline:
            returncode = self.child.poll()
            if returncode is not None:
                return self._end(returncode)
            self.clock.sleep(0.05)
        # The escalation cover lands before the kill.
        self._step("grace-expired")
        cover = -signal.SIGKILL
        self.writer.ended(harness_state.exit_description(cover))
        try:
            self.child.kill()
        except OSError:
            pass
        returncode = self.child.wait()
        if returncode != cover:
            self.writer.ended(harness_state.exit_description(returncode))
        return returncode_status(returncode)


def run_session(catalog: Path, identity: str, runtime_id: str | None, claude_argv: list[str], clock=None) -> int:
    """The ``claude-session`` verb's core. Return the exit status (Claude's, or 2 when the seat
    does not resolve, 127 when claude cannot be started)."""
    from st2.clock import Clock
    from st2.drivers.claude import seat as seat_module

    try:
        seat = seat_module.resolve(catalog, identity)
    except seat_module.SeatNotFound as error:
        _say(str(error))
        return 2
    session = ClaudeSession(seat, runtime_id or seat.agent, claude_argv, clock or Clock())
    session.install_signal_handlers()
    try:
        return session.run()
    except OSError:
        return 127


__all__ = ["ClaudeSession", "Phase", "transition", "run_session"]
