"""The Claude wrapper's startup pane watch (docs/drivers.md §Claude Code): a dialog Claude shows
before any hook can fire is published as blocked on a human.

Claude Code 2.1.197 draws its workspace trust dialog ("Accessing workspace: … 1. Yes, I trust this
folder / 2. No, exit", :func:`st2.drivers.claude.screen.trust_dialog`) when the config dir's
``.claude.json`` holds no trust for the workspace — a seat relaunched into a fresh
``CLAUDE_CONFIG_DIR`` — and waits. No hook fires before the answer (SessionStart comes after it),
so without this watch the seat reads the relaunch claim, ``unknown(claimed)``, for as long as the
dialog stands.

While the wrapper is still resident after the spawn (before it enters the slim anchor), and only
while this session is unobserved — its record is still the claim placeholder — the watch captures
its own pane every :data:`INTERVAL_SECONDS`, for at most :data:`WATCH_SECONDS`. It ends at the
first observation a hook writes, at the deadline, or when the pane cannot be read. Seeing the
dialog it writes ``active``, ``blockedOn`` human, ``ask`` permission, reason :data:`REASON` under
the session's own claim, and only over the claim (``over_claim``), so a hook's observation is never
overwritten and the first one that comes supersedes it. ``permission`` is the closest word of the
``ask`` vocabulary: the dialog asks leave for Claude to read, edit and execute in the workspace
(Claude's own words on it), a grant, not a question to answer in prose. It never answers the
dialog: the human does, at the pane.

The pane is the one tmux gave this process (``TMUX``, ``TMUX_PANE``, set by tmux itself), and only
when its server's socket is the one st2's PTY backend made for this seat (named after the runtime
id, :meth:`st2.runtime.scope.RuntimeScope.socket`): a wrapper run by hand in someone's own tmux
never reads their pane.
"""

from __future__ import annotations

import os
import subprocess

from st2.drivers.claude.screen import trust_dialog
from st2.records import harness_state
from st2.runtime.tmux import client_argv

WATCH_SECONDS = 120.0
"""How long after the spawn the pane is watched at most (Claude 2.1.197 draws the dialog within
about a second of its start in the lab)."""
INTERVAL_SECONDS = 1.0
CAPTURE_TIMEOUT_SECONDS = 2.0
REASON = "trustDialog"
"""The reason the watch's observation carries: what the operator sees next to ``blocked``, and how
the watch knows its own write from a hook's."""


def own_pane(environment: dict[str, str], runtime_id: str) -> tuple[str, str] | None:
    """``(socket, pane)`` of the pane tmux runs this process in, when its server is the seat's own
    (the socket named ``runtime_id``); else None."""
    socket = environment.get("TMUX", "").split(",", 1)[0]
    pane = environment.get("TMUX_PANE", "")
    if not socket or not pane.startswith("%") or os.path.basename(socket) != runtime_id:
        return None
    return socket, pane


class StartupWatch:
    """One session's watch (see the module docstring). ``capture()`` returns the pane's lines, or
    None when it cannot be read."""

    def __init__(self, records, clock, capture) -> None:
        self.records = records
        self.clock = clock
        self.capture = capture
        now = clock.monotonic()
        self.deadline = now + WATCH_SECONDS
        self.next_look = now + INTERVAL_SECONDS

    @classmethod
    def for_session(cls, session) -> "StartupWatch | None":
        """The watch for a just-spawned Claude session, or None when it runs in no pane of its
        seat's own tmux server."""
        pane = own_pane(session.environment, session.runtime_id)
        if pane is None:
            return None
        socket, target = pane

        def capture() -> list[str] | None:
            try:
                result = subprocess.run(client_argv(socket, "capture-pane", "-p", "-t", target), capture_output=True,
                                        text=True, errors="replace", timeout=CAPTURE_TIMEOUT_SECONDS,
                                        stdin=subprocess.DEVNULL)
            except (OSError, subprocess.TimeoutExpired):
                return None
            return result.stdout.splitlines() if result.returncode == 0 else None

        return cls(session.records, session.clock, capture)

    def unobserved(self) -> harness_state.Record | None:
        """This session's record while no hook has observed it (the claim, or the watch's own
        write); None once anything else stands there."""
        from st2.fs.read import RECORD_LIMIT, read_bounded

        path = os.path.join(self.records.seat_directory, harness_state.RECORD_NAME)
        try:
            record = harness_state.decode(read_bounded(path, RECORD_LIMIT, follow_symlinks=False))
        except Exception:
            return None
        if record.incarnation != self.records.token:
            return None
        claim = (record.state, record.reason, record.exit) == (harness_state.ENDED, harness_state.SUPERSEDED, None)
        return record if claim or record.reason == REASON else None

    def step(self) -> bool:
        """Look when a look is due; return whether the watch goes on."""
        now = self.clock.monotonic()
        if now >= self.deadline:
            return False
        if now < self.next_look:
            return True
        self.next_look = now + INTERVAL_SECONDS
        record = self.unobserved()
        if record is None:
            return False
        if record.reason == REASON:
            return True   # published: the human's answer, then Claude's first hook, ends it
        lines = self.capture()
        if lines is None:
            return False
        if trust_dialog(lines):
            self.records.writer.observe(harness_state.ACTIVE, blocked_on=harness_state.HUMAN, ask="permission",
                                        reason=REASON, over_claim=True)
        return True
