"""The Codex driver: ``codex app-server`` driven natively by ``st2 driver codex-session``.

- :mod:`.expansion` — the ``codex { … }`` block → the canonical PTY task's argv.
- :mod:`.version` — the exact-version launch gate (:data:`SUPPORTED_VERSIONS`).
- :mod:`.rpc` — JSON-RPC over the app-server's stdio with a bounded reader.
- :mod:`.server_requests` — an explicit answer for every 0.171.0 server→client request.
- :mod:`.control` — the control-state machine, persisted host-locally for an operator.
- :mod:`.context` — harness-context from ``thread/tokenUsage/updated`` (Codex's own baseline
  function, mirrored), rate limits by window duration, compactions deduped on (turnId, item id).
- :mod:`.pump` — the delivery pump over :mod:`st2.delivery.ledger` (Codex profile).
- :mod:`.session` — the wrapper itself; :mod:`.transcript` — the human view in the PTY.
- :mod:`.replay` — ``st2 driver codex replay``: captured frames through the same producers.
- :mod:`.diagnostics` — what the Codex wrapper publishes on the driver-diagnostic boundaries.
- :mod:`.human` — the human side of the Codex wrapper's PTY: what Codex is waiting for a person to
  answer, and the keyboard grammar (:mod:`.transcript` documents it).
- :mod:`.rehearsal` — a rehearsal of the Codex wrapper's code for the seat host to run once before
  it freezes its heap.
- :mod:`.screen` — the Codex TUI composer, located on the raw screen by its styled ``›`` prompt.
"""

from __future__ import annotations

HARNESS = "codex"

OWNS_DELIVERY = True
"""A codex seat is delivered by its pump only: ``ding`` is refused on it and DING holds it."""

VERSION_GATE = "exact"
SUPPORTED_VERSIONS: tuple[str, ...] = ("0.171.0",)
"""The exact codex-cli builds the wrapper drives: its measured builds, no more. Every number the
producers publish and every server-request answer was measured on these (captures/codex/<build>/);
any other build is refused with a ``versionGate`` driver-diagnostic rather than driven on a guess,
unless ``catalog.kdl`` admits it unmeasured (its context then withheld, docs/drivers.md §Measured
builds)."""

MEASURED_VERSIONS: tuple[str, ...] = ("0.171.0",)
"""The builds whose lab captures pin the context arithmetic (the 12,000-token baseline function),
the state observation, the server requests and the typed turn errors: 0.171.0, the lab's pin.
0.151.0 was measured beside it (captures/codex/0.151.0/) and is not admitted: its context numbers
and its own TUI's "% context left" are 0.171.0's, but it types an HTTP 401 as ``"other"``, so a
rejected credential would go undiagnosed."""
SESSION_OPTIONS = ("--operator",)
SCREEN_GRAMMAR = "Codex"
SESSION_HELP = "Run `codex app-server …` (after --) as the seat's native session: pump, producers, human view."
"""``st2 driver codex-session --help``'s summary."""
CONFIG_ENV = "CODEX_HOME"
"""The variable naming the harness's own config location, which an account's ``config-dir`` sets
(its config.toml, auth.json and rollouts (`sessions/`))."""
