"""Declarations: ``agent.kdl`` (and the catalog's own ``catalog.kdl``) into validated models.

``load_agent(path) -> (AgentDeclaration | None, list[Diagnostic])`` is the entry point. The
package imports only the standard library until a file is actually parsed (then ckdl).
"""

from __future__ import annotations

from st2.declarations.agent import load_agent, parse_agent
from st2.declarations.diagnostics import Diagnostic
from st2.declarations.model import AgentDeclaration, DriverBlock, RenderOperation, Resource, Restart, Task

__all__ = ["load_agent", "parse_agent", "Diagnostic", "AgentDeclaration", "DriverBlock", "RenderOperation",
           "Resource", "Restart", "Task"]
