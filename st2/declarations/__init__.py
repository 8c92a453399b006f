"""Declarations: ``agent.kdl`` (and the catalog's own ``catalog.kdl``) into validated models.

``load_agent(path) -> (AgentDeclaration | None, list[Diagnostic])`` is the entry point. The
package imports only the standard library until a file is actually parsed (then ckdl), and its
names are loaded on first use: importing :mod:`st2.declarations.diagnostics` (as discovery does)
or :mod:`st2.declarations.model` does not load the parser, so a roster or a send whose
declarations all come from the host-local cache (:mod:`st2.declaration_cache`) never pays for it.
"""

from __future__ import annotations

__all__ = ["load_agent", "parse_agent", "Diagnostic", "AgentDeclaration", "DriverBlock", "RenderOperation",
           "Resource", "Restart", "Task"]


def __getattr__(name: str):
    if name in ("load_agent", "parse_agent"):
        from st2.declarations import agent

        return getattr(agent, name)
    if name == "Diagnostic":
        from st2.declarations.diagnostics import Diagnostic

        return Diagnostic
    if name in __all__:
        from st2.declarations import model

        return getattr(model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
