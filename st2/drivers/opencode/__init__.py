"""The opencode driver: ``opencode serve`` driven natively by ``st2 driver opencode-session``.

- :mod:`.expansion` — the ``opencode { … }`` block → the canonical PTY task's argv.
- :mod:`.api` — the loopback HTTP client (basic auth with the launch's password), the SSE frame
  parser, the version probe and the apiGate check of the OpenAPI document.
- :mod:`.event_stream` — ``GET /event`` on its own thread, handed to the wrapper's loop.
- :mod:`.attached_tui` — opencode's own TUI in the pane while the wrapper serves.
- :mod:`.read_back` — delivery with durable read-back from the session's history.
- :mod:`.local` — host-local launch state (port, password, bound session), never in the catalog.
- :mod:`.context` — harness-context from ``message.updated`` over ``GET /config/providers``.
- :mod:`.observed` — harness-state from session status and the pending permissions/questions.
- :mod:`.pump` — delivery through the session message API with durable read-back
  (:mod:`st2.delivery.ledger`, opencode profile: never releases).
- :mod:`.session` — the wrapper itself (and its transcript view of the SSE stream).
- :mod:`.replay` — ``st2 driver opencode replay``: captured SSE frames through the same producers.
- :mod:`.attach_anchor` — opencode's own TUI in a forked wrapper's pane: run by the pane's
  ``/bin/sh`` anchor.
- :mod:`.view` — the human view in an opencode seat's PTY, where a pending permission or question
  is answered (``View.resolve``: ``POST /permission/{id}/reply``, ``/question/{id}/reply|reject``).
"""

from __future__ import annotations

HARNESS = "opencode"

OWNS_DELIVERY = True
"""An opencode seat is delivered by its wrapper's pump only: ``ding`` is refused and DING holds it."""

VERSION_GATE = "exact"
SUPPORTED_VERSIONS: tuple[str, ...] = ("1.18.25", "1.18.33")
"""The exact opencode builds the wrapper drives: its measured builds, no more. Every number the
producers publish was measured on these (captures/opencode/<build>/); any other build is refused
with a ``versionGate`` driver-diagnostic rather than driven on a guess, unless ``catalog.kdl``
admits it unmeasured (its context then withheld, docs/drivers.md §Measured builds)."""
MEASURED_VERSIONS: tuple[str, ...] = ("1.18.25", "1.18.33")
"""The builds whose lab captures pin the context join, the state observation and the served routes:
1.18.33 (the lab's pin) and 1.18.25."""
SESSION_OPTIONS = ("--model", "--operator", "--view")
SCREEN_GRAMMAR = None
"""opencode has no maintained screen grammar: DING holds on its seat (it owns its delivery)."""
TUI_VIEW = "attach"
"""The ``--view`` in which the pane runs opencode's own TUI: a wrapper the seat host forks has its
pane anchor run it (:data:`.attach_anchor.ANCHOR`, :func:`st2.drivers.tui_anchor`)."""
SESSION_HELP = "Run `opencode serve …` (after --) as the seat's native session: SSE producers, pump, human view."
"""``st2 driver opencode-session --help``'s summary."""
CONFIG_ENV = "XDG_DATA_HOME"
"""The variable naming the harness's own config location, which an account's ``config-dir`` sets:
its credentials (``opencode/auth.json``) and every session (``opencode/opencode.db``)
live under it; ``OPENCODE_CONFIG_DIR`` moves the config alone (tests/drivers/opencode/test_account_move_lab.py)."""
