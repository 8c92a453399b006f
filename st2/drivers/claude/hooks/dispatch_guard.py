"""``st2 hook dispatch-guard``: the PreToolUse guard on the Agent tool (docs/kit.md
§Dispatch guard). It reads the payload once and runs, in order:

- D1 fork ban — ``subagent_type`` fork blocks, unconditionally (no knob; the valve is unwiring).
- D2 read-only claim — a type in ``DELEGATION_KIT_READONLY_TYPES`` blocks unless
  ``isolation: worktree``. Inert while the roster is empty.
- D4 default isolation — while ``DELEGATION_KIT_MUTATING_TYPES`` is non-empty, any type it does
  not declare (the absent type included) blocks unless isolated.
- D5 chosen tier — with ``DELEGATION_KIT_REQUIRE_TIER=on``, a dispatch naming no model blocks
  unless a definition under ``DELEGATION_KIT_AGENT_DIR`` declares its type and states ``model:``.
- D6 bound tier — with a non-empty ``DELEGATION_KIT_TIER_MODEL``, a named model must match a
  bound value (equal to the id, or one of its ``-`` tokens after the first).
- D3 nested dispatch — ``agent_id`` present in the payload advises (exit 0 with
  ``additionalContext``): the call creates a grandchild with no upward channel. Runs last; a
  blocked dispatch needs no advisory.

A block is exit 2 with a stderr message naming the two lawful shapes. Degradation is
fail-open-but-loud: an unreadable payload advises that D1, D2, D4, D5 and D6 went unenforced;
malformed delegation knobs (the table validator) cost D2, D4, D5 and D6 together, loudly, and
never the dispatch; an unreadable definition directory costs D5 alone. A roster resolved to
nothing is silent.
"""

from __future__ import annotations

import os
from collections import namedtuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from collections.abc import Mapping

from st2.records import decoding
from st2.kit.delegation import agent_definitions, knobs
from st2.drivers.claude.hooks import output as hook_output

NAME = "dispatch-guard"
ISOLATED = "worktree"
FORK = "fork"


class Config:
    """What the routing reads: D2's and D4's rosters, D5's switch and lookup, D6's binding.
    The defaults leave every configurable rule inert."""

    def __init__(self) -> None:
        self.readonly: list[str] = []
        self.mutating: list[str] = []
        self.require_tier = False
        self.is_tiered = lambda subagent_type: False   # (str) -> bool
        self.binding: list[knobs.TierRow] = []


def route(subagent_type: str, isolation: str, model: str, nested: bool, config: Config) -> str:
    """The rule that decides this dispatch: ``D1``, ``D2``, ``D4``, ``D5``, ``D6`` (blocks),
    ``D3`` (advises) or ``fallthrough``. The order is the one docs/kit.md §Dispatch guard gives."""
    isolated = isolation == ISOLATED
    if subagent_type == FORK:
        return "D1"
    if subagent_type and not isolated and subagent_type in config.readonly:
        return "D2"
    if config.mutating and not isolated and subagent_type not in config.mutating:
        return "D4"
    if config.require_tier and not model and not config.is_tiered(subagent_type):
        return "D5"
    if config.binding and model and not any(knobs.model_matches(row.model, model) for row in config.binding):
        return "D6"
    if nested:
        return "D3"
    return "fallthrough"


# A namedtuple, not a dataclass: dataclasses pulls in inspect (ast, dis, tokenize) and typing,
# ~15 ms of this hook's start on every dispatch (docs/memory.md §Both install kinds).
class Decision(namedtuple("Decision", ("code", "stdout", "stderr", "rule"), defaults=("", "", "fallthrough"))):
    """A dispatch's outcome: exit status, hook JSON on stdout, block message on stderr, and
    the rule that decided it."""

    __slots__ = ()


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _type_label(subagent_type: str) -> str:
    return f"'{subagent_type}'" if subagent_type else "the harness's default type (no subagent_type)"


def block_message(rule: str, subagent_type: str, model: str, config: Config, agent_dir: str) -> str:
    if rule == "D1":
        return (
            "D1 (the fork ban): a fork inherits the dispatcher's whole context, toolset and tier, so any "
            "narrowing its prompt states exists only as a sentence. Two lawful shapes: dispatch a typed "
            "agent whose definition carries the narrower authority, brief and tier; or, for the same job "
            "at the same authority, dispatch that typed agent with isolation: worktree. There is no "
            "per-dispatch override; the valve is unregistering this hook."
        )
    if rule == "D2":
        return (
            f"D2 (the read-only claim): {_type_label(subagent_type)} is declared read-only "
            "(DELEGATION_KIT_READONLY_TYPES), but this dispatch is not isolated, and a type's toolset, its "
            "shell included, reaches git whatever the prompt says. Two lawful shapes: add isolation: "
            "worktree, so the claim is made by the shape; or, if this type is not in fact dispatched "
            "read-only, drop it from the roster."
        )
    if rule == "D4":
        return (
            f"D4 (default isolation): {_type_label(subagent_type)} is not a declared mutating type "
            "(DELEGATION_KIT_MUTATING_TYPES) and this dispatch is not isolated; a type nobody declared "
            "mutating is confined to a worktree. Two lawful shapes: add isolation: worktree; or dispatch "
            "a declared mutating type."
        )
    if rule == "D5":
        return (
            f"D5 (the chosen tier): this dispatch names no model and {_type_label(subagent_type)} has no "
            f"definition under {agent_dir} stating model:, so the child would inherit the dispatcher's "
            "tier by default, not by choice. Two lawful shapes: name a model on this dispatch; or "
            "dispatch a type whose definition states one."
        )
    bound = ", ".join(row.model for row in config.binding)
    return (
        f"D6 (the bound tier): this dispatch names model '{model}', which matches none of the bound "
        f"tiers ({bound}; DELEGATION_KIT_TIER_MODEL). Two lawful shapes: name one of the bound values; "
        "or, where the class you need is pinned to an exact model id, dispatch a type whose definition "
        "declares that class."
    )


NESTED_ADVICE = (
    "D3 (nested dispatch): you are yourself a dispatched agent, so this call creates a grandchild "
    "with no upward channel to you: it cannot message you mid-run. Give it return-value-only work, "
    "or name a durable path in the main checkout absolutely in its prompt and read that path yourself."
)

DEGRADED_ADVICE = (
    "allowed this dispatch WITHOUT enforcing the fork ban (D1), the read-only claim (D2), default "
    "isolation (D4), the chosen tier (D5) or the bound tier (D6): {reason}. Check the dispatch by "
    "hand: no fork; a read-only or undeclared type takes isolation: worktree; the dispatch names its "
    "model unless its type's definition states one; a named model is one of the bound tiers."
)


def _raw_agent_dir(environ: Mapping[str, str]) -> str:
    """The agent dir a block message names when the configuration did not resolve (only D1
    can block then, and its message does not name it)."""
    return environ.get(knobs.AGENT_DIR) or knobs.TABLE[knobs.AGENT_DIR].default


def decide(payload_text: str | None, environ: Mapping[str, str], cwd: str) -> Decision:
    """Decide one dispatch from its PreToolUse payload text."""
    try:
        payload = decoding.load_json(payload_text) if payload_text else None
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or not isinstance(payload.get("tool_input"), dict):
        reason = "the hook payload did not parse, or carried no tool_input object"
        return Decision(0, stdout=hook_output.advise(f"{NAME}: " + DEGRADED_ADVICE.format(reason=reason)), rule="degraded")

    notes: list[str] = []
    config = Config()
    resolved, findings = knobs.load(environ, cwd)
    agent_dir = knobs.agent_dir(resolved) if resolved is not None else _raw_agent_dir(environ)
    if resolved is None:
        notes.append(
            "D2 (the read-only claim), D4 (default isolation), D5 (the chosen tier) and D6 (the bound "
            "tier) went unenforced on this dispatch: the delegation knobs are malformed: "
            + "; ".join(findings) + "."
        )
    else:
        config.readonly = knobs.readonly_types(resolved)
        config.mutating = knobs.mutating_types(resolved)
        config.require_tier = knobs.require_tier(resolved)
        config.binding = knobs.tier_model(resolved)
        directory = agent_dir if os.path.isabs(agent_dir) else os.path.join(cwd, agent_dir)

        def is_tiered(subagent_type: str) -> bool:
            try:
                return agent_definitions.type_is_tiered(directory, subagent_type)
            except agent_definitions.UnreadableAgentDirectory as error:
                notes.append(f"D5 (the chosen tier) went unenforced on this dispatch: {error}.")
                return True

        config.is_tiered = is_tiered

    tool_input = payload["tool_input"]
    subagent_type = _text(tool_input.get("subagent_type"))
    isolation = _text(tool_input.get("isolation"))
    model = _text(tool_input.get("model"))
    nested = "agent_id" in payload
    rule = route(subagent_type, isolation, model, nested, config)
    if rule in ("D1", "D2", "D4", "D5", "D6"):
        message = f"{NAME}: blocked by {block_message(rule, subagent_type, model, config, agent_dir)}\n"
        if notes:
            message += f"{NAME}: also: " + " ".join(notes) + "\n"
        return Decision(2, stderr=message, rule=rule)
    if rule == "D3":
        notes.append(NESTED_ADVICE)
    if notes:
        return Decision(0, stdout=hook_output.advise(f"{NAME}: " + " ".join(notes)), rule="advise")
    return Decision(0, rule="fallthrough")


def main(argv: list[str]) -> int:
    """Hot-path entry: the PreToolUse payload on stdin."""
    return hook_output.run_hook(decide)
