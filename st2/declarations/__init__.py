"""Declarations: ``agent.kdl`` (and the catalog's own ``catalog.kdl``) into validated models.

``load_agent(path) -> (AgentDeclaration | None, list[Diagnostic])`` is the entry point. The
package imports only the standard library until a file is actually parsed (then ckdl), and its
names are loaded on first use: importing :mod:`st2.declarations.diagnostics` (as discovery does)
or :mod:`st2.declarations.model` does not load the parser, so a roster or a send whose
declarations all come from the host-local cache (:mod:`st2.runtime.declaration_cache`) never pays for it.

- :mod:`.agent` — load one ``agent.kdl`` into an :class:`~st2.declarations.model.AgentDeclaration`.
- :mod:`.accounts` — ``catalog.kdl``'s ``account`` blocks: config locations, scoped usage knobs,
  hold-on-pause, failover and relaunch admission.
- :mod:`.builds` — ``catalog.kdl``'s ``admit-unmeasured``: exact harness builds launched outside
  their driver's measured set.
- :mod:`.catalog` — the catalog's own declaration, ``<catalog>/catalog.kdl``.
- :mod:`.context` — the reporting context shared by the declaration validators.
- :mod:`.durations` — duration strings as declarations and flags write them: ``500ms``, ``60s``,
  ``5m``, ``2h``, ``7d``, or a bare integer meaning seconds.
- :mod:`.event_kinds` — the closed vocabulary of fleet event kinds (``st2.fleet-event.v1``'s
  ``kind``).
- :mod:`.fields` — shape checks for single declaration fields: "exactly one string", "one boolean",
  "strings only".
- :mod:`.kdl_lexer` — a character-level KDL 2 lexer: whitespace, comments, line continuations,
  strings (quoted, raw, multi-line), numbers, keywords and type annotations.
- :mod:`.principal` — a declared non-agent service principal,
  ``principals/<host>/<name>/principal.kdl``.
- :mod:`.resource_providers` — ``catalog.kdl``'s ``resource-provider`` and ``resource-command``
  blocks, and which resource URIs name a target st2 may observe.
- :mod:`.render` — ``render { … }``: ordered materialization operations, and ``resource`` bindings.
- :mod:`.schedule` — ``schedule "<name>" { every | at; prompt }``: a scheduled prompt's shape.
- :mod:`.subscription` — ``subscribe "<binding>" stream=… agent=…``: a resync subscription's shape.
- :mod:`.spans` — source positions for KDL 2 documents.
- :mod:`.tasks` — ``pty``, ``exec`` and ``stream`` task blocks, and the agent's ``restart`` block.
- :mod:`.worktree` — ``worktree { repo; branch; base; path }``: a seat's own git worktree, judged
  without touching the disk.
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
