"""The screen grammars DING classifies a seat with (:class:`st2.drivers.screen.Harness`): the
TUI grammars live in their driver packages (:func:`st2.drivers.screen_grammar`); the plain
terminal line grammar and the "no grammar, hold" case are DING's own.

A seat's adapters are chosen from its declaration: a seat with no harness driver is a plain
terminal program (the demo ``shell`` seats) and gets only the line grammar, which claims the
cursor row of any screen and so must never be dispatched against a TUI's screen. A seat driving
Claude Code, Codex, pi or omp gets positional dispatch over the TUI grammars. Any other harness
(opencode) has no maintained screen grammar here: its adapter list is empty, every screen is unproven, and DING
holds rather than types into a surface it cannot read.

- :mod:`.shell` — the line composer of a plain terminal program (the demo ``shell`` seats,
  line-oriented TUIs).
"""

from __future__ import annotations

from st2.ding.harness.shell import Shell
from st2.drivers import screen_grammar, screen_grammars

SHELL = "shell"
# Every driver's TUI grammar, in positional dispatch order (a row tie resolves to the later one).
TUI_ADAPTERS = screen_grammars()


def adapters_for(harness: str | None) -> tuple:
    """The adapters to classify a seat's screens with (empty: nothing can be proven). A seat
    whose driver has a screen grammar gets positional dispatch over every driver's TUI grammar."""
    if harness in (None, SHELL):
        return (Shell(),)
    if screen_grammar(harness) is not None:
        return TUI_ADAPTERS
    return ()


def declared_harness(declaration_path) -> tuple[str | None, str | None]:
    """``(harness, error)`` from a seat's ``agent.kdl``: its driver block (``claude { … }``) or
    render-only ``harness "…"`` field; ``(None, None)`` for a plain seat; ``(None, error)`` when
    the declaration cannot be read (the caller then proves nothing and holds)."""
    from st2.declarations.agent import load_agent

    declaration, diagnostics = load_agent(declaration_path)
    if declaration is None:
        reason = diagnostics[0].message if diagnostics else "unreadable"
        return None, f"cannot read {declaration_path}: {reason}"
    if declaration.drivers:
        return next(iter(declaration.drivers)), None
    declared = declaration.render_only.get("harness")
    if declared:
        return str(declared[0]), None
    return None, None
