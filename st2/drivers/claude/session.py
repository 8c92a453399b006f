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

import os
import signal
import subprocess
import sys
from collections import deque
from pathlib import Path

from st2.drivers.claude import HARNESS, RUNTIME_ID_ENV, SESSION_ENV, SESSION_SEQ_ENV
from st2.drivers.seat import Seat
from st2.drivers.session_common import (STOP_GRACE_SECONDS, Phase, SessionRecords, returncode_status, say,
                                        stop_with_cover, transition)
from st2.records import status

POLL_SECONDS = 0.25
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


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
    say("st2 claude-session", message)


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
        self.records = SessionRecords(seat.directory, seat.agent, HARNESS, runtime_id, clock,
                                      prefix="st2 claude-session")

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

    @property
    def writer(self):
        return self.records.writer

    def start(self) -> None:
        self.records.claim()
        token, seq = self.records.token, self.records.seq
        try:
            self.child = subprocess.Popen(self.claude_argv,
                                          env=claude_environment(self.environment, self.runtime_id, token, seq))
        except OSError as error:
            _say(f"cannot start {self.claude_argv[0]!r}: {error.strerror or error}")
            self._step("spawn-failed")
            self.records.ended(127)
            raise
        self._step("spawned")

    def _end(self, returncode: int) -> int:
        self._step("reaped")
        self.records.ended(returncode)
        return returncode_status(returncode)

    def run(self) -> int:
        """Run until Claude is reaped; return the wrapper's exit status."""
        if self.phase is Phase.STARTING:
            self.start()
        while True:
            returncode = self.child.poll()
            if returncode is not None:
                return self._end(returncode)
            if self.requests:
                self.requests.clear()
                return self._stop()
            self.records.tick()
            self.clock.sleep(POLL_SECONDS)

    def _stop(self) -> int:
        self._step("stop-requested")

        def terminate() -> None:
            if os.getpgrp() == os.getpid():
                # We lead the PTY's group: Claude and its tools hear it; ours is only enqueued.
                os.killpg(os.getpgrp(), signal.SIGTERM)
            else:  # never signal a group we do not lead
                self.child.terminate()

        returncode, escalated = stop_with_cover(self.child, self.records, self.clock, self.stop_grace,
                                                terminate, self.child.kill)
        self._step("grace-expired" if escalated else "reaped")
        return returncode_status(returncode)


def run_session(catalog: Path, identity: str, runtime_id: str | None, claude_argv: list[str], clock=None) -> int:
    """The ``claude-session`` verb's core. Return the exit status (Claude's, or 2 when the seat
    does not resolve, 127 when claude cannot be started)."""
    from st2.clock import Clock
    from st2.drivers import seat as seat_module

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
