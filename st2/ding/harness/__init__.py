"""Per-harness screen grammars behind one interface (:class:`st2.drivers.screen.Harness`).

A seat's adapters are chosen from its declaration: a seat with no harness driver is a plain
terminal program (the demo ``shell`` seats) and gets only the line grammar, which claims the
cursor row of any screen and so must never be dispatched against a TUI's screen. A seat driving
Claude Code, Codex, pi or omp gets positional dispatch over the TUI grammars. Any other harness
(opencode) has no maintained screen grammar here: its adapter list is empty, every screen is unproven, and DING
holds rather than types into a surface it cannot read.
"""

from __future__ import annotations

from st2.drivers.claude.screen import Claude
from st2.drivers.codex.screen import Codex
from st2.drivers.omp.screen import Omp
from st2.drivers.pi.screen import Pi
from st2.ding.harness.shell import Shell

SHELL = "shell"
TUI_ADAPTERS = (Codex(), Pi(), Omp(), Claude())  # a row tie resolves to the later one
MAINTAINED = ("shell", "claude", "codex", "pi", "omp")


def adapters_for(harness: str | None) -> tuple:
    """The adapters to classify a seat's screens with (empty: nothing can be proven)."""
    if harness in (None, SHELL):
        return (Shell(),)
    if harness in ("claude", "codex", "pi", "omp"):
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
