"""The Claude Code driver.

- :mod:`.session` — ``st2 driver claude-session``: runs ``claude`` in the seat's PTY, claims the
  session, refreshes presence, re-stamps observed state and writes the terminal ``ended`` record.
- :mod:`.hooks` — every Claude Code hook st2 registers (hot paths): ``claude-observe`` (one hook
  event → harness-state and the compaction edges of harness-context), the SubagentStop liveness
  hook and the two PreToolUse guards (budget, dispatch).
- :mod:`.screen` — the DING screen grammar of the Claude Code TUI (and its trust dialog).
- :mod:`.startup_watch` — the wrapper's startup pane watch: a trust dialog shown before any hook
  is published as blocked on a human.
- :mod:`.statusline` — ``st2 driver claude-statusline`` (hot path): the status-line tee that
  records the reading, writes the usage snapshot, then runs the operator's own renderer.
- :mod:`.settings` / :mod:`.expansion` — the ``claude { … }`` block's argv and rendered
  ``.claude/settings.local.json``.
- :mod:`.replay` — ``st2 driver claude replay``: captured payloads through the same producers.
- :mod:`.events` — Claude hook events → observed harness state and compaction edges.
- :mod:`.payload` — the Claude status-line payload → one harness-context reading.
- :mod:`.recording` — apply one Claude hook event, or one status-line payload, to a seat's records.
- :mod:`.renderer` — the operator's downstream status-line renderer: resolution and one run.
- :mod:`.seat` — which seat a Claude hook or tee writes to, and as which session.
- :mod:`.permission` — ``st2 driver claude-permission``: the PermissionRequest hook that waits
  beside the dialog for an answer from `st2 web`, and the ask and answer files it shares with it.
- :mod:`.statusline_arm` — ``st2 driver claude-statusline-arm [--identity I] [--catalog C]``.

Standard library only at import time (hot paths import this package).
"""

from __future__ import annotations

HARNESS = "claude"

# The wrapper exports these into Claude's environment, so every hook subprocess writes as the
# wrapper's session (same incarnation token and claimed ownership sequence) and names the same
# PTY session the wrapper's own records do.
RUNTIME_ID_ENV = "ST2_CLAUDE_RUNTIME_ID"
SESSION_ENV = "ST2_CLAUDE_SESSION"
SESSION_SEQ_ENV = "ST2_CLAUDE_SESSION_SEQ"

# The Claude Code builds whose payload arithmetic the fixtures pin (captures/claude-code/<v>/):
# 2.1.197 (the lab's pin) and 2.1.250 from the lab tier (interactive TUI against the fake model
# server) and 2.1.328 from the shared live captures.
MEASURED_VERSIONS = ("2.1.197", "2.1.250", "2.1.328")

# The driver's contract (st2.base.harnesses.CONTRACT). Claude Code has no launch gate: the hooks and
# the status line read whatever build runs, and the fixtures pin what its numbers mean.
OWNS_DELIVERY = False  # DING types notices into the Claude Code TUI
VERSION_GATE = None
SUPPORTED_VERSIONS: tuple[str, ...] = ()
SESSION_OPTIONS: tuple[str, ...] = ()
SCREEN_GRAMMAR = "Claude"
SESSION_HELP = "Run `claude …` (after --) in this PTY as the seat's session."
"""``st2 driver claude-session --help``'s summary."""
CONFIG_ENV = "CLAUDE_CONFIG_DIR"
"""The variable naming the harness's own config location, which an account's ``config-dir`` sets
(its settings, credentials and session transcripts (`projects/`))."""
