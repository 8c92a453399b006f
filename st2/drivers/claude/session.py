"""``st2 driver claude-session --identity I --runtime-id R -- claude …``: the Claude wrapper, the
command inside a Claude seat's PTY task (docs/drivers.md §Wrapper terminal write;
docs/records.md §Harness state, docs/records.md §Status).

Lifecycle, one transition function over :class:`Phase`:

- STARTING → RUNNING: claim the session (the written harness-state claim under a fresh token,
  which also removes ``harness-context`` so a reader sees "no context yet" rather than the
  previous incarnation's fill), refresh presence, spawn ``claude`` in this PTY and in this
  process group (it must stay the terminal's foreground group to read the keyboard), exporting
  the token, the claimed sequence and the runtime id so every hook writes as this session.
- RUNNING, first the startup pane watch (:mod:`st2.drivers.claude.startup_watch`, at most
  two minutes, ended by the first hook's observation): a trust dialog on the pane, shown before
  any hook can fire, is published as blocked on a human; the wrapper stays resident meanwhile.
- RUNNING: poll the child every :data:`POLL_SECONDS`; refresh presence every
  ``STATUS_REFRESH`` (5 min) and re-stamp this session's observed state when its refresh is due,
  while — and only while — Claude lives. As the verb runs it (``anchors``), the wrapper does not
  stay resident for this phase: it ``exec``\\ s into the slim anchor (:mod:`st2.drivers.anchor`,
  a ``python -S -I`` importing only built-in modules, with the same PID, session, group,
  terminal and child; docs/memory.md §The Claude wrapper's slim anchor), registered with the scope's seat
  host for the two periodic duties (:mod:`st2.seathost.keeper`), and ``exec``\\ s back here on a
  stop, on Claude's reap, or for a refresh no host serves (:mod:`st2.drivers.session_anchor`);
  every edge below then runs exactly as written.
- RUNNING → STOPPING on SIGTERM/SIGHUP (handlers only enqueue; the loop acts): signal the group
  with SIGTERM and give Claude :data:`STOP_GRACE_SECONDS` to exit.
- → ENDED when Claude is reaped: write the terminal ``ended`` record carrying the real exit
  (``exit 0``, ``signal 15``) and exit with Claude's status.
- STOPPING past the grace: write ``ended`` / ``signal 9`` first — the escalation cover, landed
  before the SIGKILL because a kill of the whole group could not be followed by any write — then
  SIGKILL Claude alone, reap it, and rewrite from the reap if the real status differs.

Limits, stated (docs/drivers.md §Wrapper terminal write): a SIGKILL of the wrapper itself (an external forced kill, the
supervisor's own group escalation, ``tmux kill-server`` followed by a kill of the pane's group
inside our grace) runs no code here, so no terminal record is written; the reader's PTY liveness
cross-check and the staleness horizon are the only fallback. The supervisor's stop escalates after
3 s, so :data:`STOP_GRACE_SECONDS` is kept below it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from st2.drivers.claude import HARNESS, RUNTIME_ID_ENV, SESSION_ENV, SESSION_SEQ_ENV
from st2.drivers.child_session import POLL_SECONDS, ChildSession, run_child_session
from st2.drivers.lifecycle import STOP_GRACE_SECONDS, Phase, returncode_status, transition


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


class ClaudeSession(ChildSession):
    """One run of Claude under the wrapper (the loop is :class:`ChildSession`'s). Claude's own part:
    the child environment exports the token, the claimed sequence and the runtime id, so every
    hook writes as this session."""

    harness = HARNESS
    label = "claude-session"
    resumes = True
    anchors = True
    watch = None   # st2.drivers.claude.startup_watch.StartupWatch, from a spawn until it ends

    def spawned(self) -> None:
        """Watch the pane for a dialog Claude shows before any hook (the trust dialog)."""
        from st2.drivers.claude.startup_watch import StartupWatch

        self.watch = StartupWatch.for_session(self)

    def startup_step(self) -> bool:
        if self.watch is not None and not self.watch.step():
            self.watch = None
        return self.watch is not None

    def resume_argv(self, session_id: str) -> list[str]:
        """``claude … --resume=<session id>`` (2.1.197 keeps the id: ``--fork-session`` is what
        would mint a new one), the id joined to its option so it is never read as one. Claude's
        hooks publish the id it runs (SessionStart …)."""
        return [*self.argv, f"--resume={session_id}"]

    def accepts_session_id(self, session_id: str) -> bool:
        """A Claude session id is a UUID (:func:`st2.drivers.session_ids.is_uuid`)."""
        from st2.drivers.session_ids import is_uuid

        return is_uuid(session_id)

    def child_environment(self) -> dict[str, str]:
        return claude_environment(self.environment, self.runtime_id, self.records.token, self.records.seq)


def run_session(catalog: Path, identity: str, runtime_id: str | None, claude_argv: list[str], clock=None) -> int:
    """The ``claude-session`` verb's core. Return the exit status (Claude's, or 2 when the seat
    does not resolve, 127 when claude cannot be started)."""
    return run_child_session(ClaudeSession, catalog, identity, runtime_id, claude_argv, clock)


__all__ = ["ClaudeSession", "Phase", "POLL_SECONDS", "STOP_GRACE_SECONDS", "transition", "returncode_status",
           "run_session"]
