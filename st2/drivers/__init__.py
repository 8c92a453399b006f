"""Harness drivers: one package per harness (``st2.drivers.claude`` …).

A driver owns everything harness-specific: the wrapper that runs the harness in its PTY, the
hooks or channels that observe it, the producers of the ``harness-state`` and ``harness-context``
records, the DING screen grammar of its TUI, and the expansion of its typed declaration block
(``claude { … }``) into the seat's argv and render block. Core st2 consumes the records
generically and never branches on a harness.

The registry below is explicit: a driver's expansion or screen grammar exists when it is named
here, never because a module happens to import. Every lookup imports its module on first use, so
a process pays only for the harness it serves (the DING notifier, the hot-path hooks).

- :mod:`.anchor` — the slim anchor: what a Claude seat's wrapper process is while Claude runs (issue
  19).
- :mod:`.block` — the field grammar every typed driver block shares (``claude { … }``, ``codex { …
  }`` …).
- :mod:`.hook_assets` — where the harness-side assets (``claude-statusline.sh``, ``pi-channel.ts``,
  ``omp-channel.ts`` …) are on this machine.
- :mod:`.operator_line` — a line a human types in a native seat's PTY, sent as a bus message into
  the seat's own inbox from its operator.
- :mod:`.screen` — one observed terminal screen and what a harness adapter may conclude from it.
- :mod:`.seat` — which seat a driver process serves.
- :mod:`.session_anchor` — the full wrapper's side of the slim anchor (:mod:`st2.drivers.anchor`,
  issue 19).
- :mod:`.session_common` — what every harness session wrapper does the same way.
- :mod:`.session_handoff` — the pane's side of a native seat's forked wrapper.
- :mod:`.session_ids` — which strings each harness's own session store can name.
- :mod:`.session_route` — the session wrappers' verbs without click, in the one shape the supervisor
  launches them.
- :mod:`.claude` — the Claude Code driver.
- :mod:`.codex` — the Codex driver: ``codex app-server`` driven natively by ``st2 driver
  codex-session``.
- :mod:`.omp` — the omp driver: the omp TUI in the seat's PTY, observed through st2's channel
  extension (``hooks/omp-channel.ts``).
- :mod:`.opencode` — the opencode driver: ``opencode serve`` driven natively by ``st2 driver
  opencode-session``.
- :mod:`.pi` — the pi driver: the pi TUI in the seat's PTY, observed through st2's channel
  extension.
"""

from __future__ import annotations

# The harnesses whose typed block (``claude { … }``) a driver expands: a driver lands by adding
# its harness here and its branch to :func:`expansion`.
EXPANDING_HARNESSES = ("claude", "codex", "pi", "omp", "opencode")
# Positional screen dispatch order: on a row tie the later grammar wins (st2.drivers.screen).
SCREEN_GRAMMAR_HARNESSES = ("codex", "pi", "omp", "claude")


def expansion(harness: str):
    """The module whose ``expand(declaration, host, st2_command)`` expands ``harness``'s typed
    block, or None when that harness has no expansion yet (not in :data:`EXPANDING_HARNESSES`)."""
    if harness == "claude":
        from st2.drivers.claude import expansion

        return expansion
    if harness == "codex":
        from st2.drivers.codex import expansion

        return expansion
    if harness == "pi":
        from st2.drivers.pi import expansion

        return expansion
    if harness == "omp":
        from st2.drivers.omp import expansion

        return expansion
    if harness == "opencode":
        from st2.drivers.opencode import expansion

        return expansion
    return None


def screen_grammar(harness: str | None):
    """A new instance of ``harness``'s DING screen grammar (:class:`st2.drivers.screen.Harness`),
    or None when its driver maintains none (DING then holds)."""
    if harness == "claude":
        from st2.drivers.claude.screen import Claude

        return Claude()
    if harness == "codex":
        from st2.drivers.codex.screen import Codex

        return Codex()
    if harness == "pi":
        from st2.drivers.pi.screen import Pi

        return Pi()
    if harness == "omp":
        from st2.drivers.omp.screen import Omp

        return Omp()
    return None


def expand_driver_blocks(declaration, host: str, st2_command: list[str]):
    """Return ``declaration`` with each typed driver block it declares expanded into argv and
    render operations by that harness's :func:`expansion`. Raise ``ValueError`` naming the
    problem when a block cannot be expanded, including a block for a harness whose driver has
    not landed (not in :data:`EXPANDING_HARNESSES`): ignoring it would launch a seat without the
    driver its declaration asks for."""
    for harness in sorted(declaration.drivers):
        module = expansion(harness)
        if module is None:
            raise ValueError(f"st2 has no {harness} driver yet: the `{harness} {{ … }}` block cannot be expanded")
        declaration = module.expand(declaration, host, st2_command)
    return declaration


SHELL = "shell"


def available_harnesses() -> tuple[str, ...]:
    """The harnesses a new seat can be declared with: ``shell`` (a plain ``argv`` seat, which the
    core runs itself) and every harness whose driver expands its typed block
    (:data:`EXPANDING_HARNESSES`), in the declaration model's order."""
    from st2.declarations.model import DRIVER_HARNESSES

    return (SHELL,) + tuple(harness for harness in DRIVER_HARNESSES if harness in EXPANDING_HARNESSES)


def package(harness: str | None):
    """``harness``'s driver package (``st2.drivers.<harness>``, light by contract), or None when
    st2 has no driver package for it."""
    if harness == "claude":
        import st2.drivers.claude as driver
    elif harness == "codex":
        import st2.drivers.codex as driver
    elif harness == "opencode":
        import st2.drivers.opencode as driver
    elif harness == "pi":
        import st2.drivers.pi as driver
    elif harness == "omp":
        import st2.drivers.omp as driver
    else:
        return None
    return driver


def owns_delivery(harness: str | None) -> bool:
    """Whether ``harness``'s driver delivers mail natively (its package's ``OWNS_DELIVERY``), so
    no DING may type into its seat."""
    return bool(getattr(package(harness), "OWNS_DELIVERY", False))


def delivery_owner(declaration_path) -> str | None:
    """The harness whose driver block in ``declaration_path`` owns the seat's delivery, or None
    (a plain seat, a render-only ``harness`` field, or an unreadable declaration)."""
    from st2.declarations.agent import load_agent

    declaration, _ = load_agent(declaration_path)
    if declaration is None:
        return None
    return next((harness for harness in sorted(declaration.drivers) if owns_delivery(harness)), None)
