"""The human `st2 agents` line: identity, presence, desired state, then the prefixed
``obs:`` and ``ctx:`` columns so two bare words never sit ambiguously in one row."""

from __future__ import annotations

from typing import Any

from st2.roster.row import RosterRow


def observed_column(observed: dict[str, Any] | None) -> str:
    """``obs:-`` no record; ``obs:unknown(<reason>)`` derived unknown; else the state, with
    ``+blocked:<on>`` when the harness is blocked on something."""
    if observed is None:
        return "obs:-"
    state = observed.get("state") or "unknown"
    if state == "unknown":
        reason = observed.get("reason")
        return f"obs:unknown({reason})" if reason else "obs:unknown"
    text = f"obs:{state}"
    blocked_on = observed.get("blockedOn")
    if blocked_on and blocked_on != "none":
        text += f"+blocked:{blocked_on}"
    return text


def context_column(context: dict[str, Any] | None) -> str:
    """``ctx:-`` no record, ``ctx:?`` a record whose percent was withheld, else the percent
    rounded for width (never clamped), ``⟳N`` compactions, ``stale`` suffix."""
    if context is None:
        return "ctx:-"
    percent = context.get("usedPercent")
    text = "ctx:?" if percent is None else f"ctx:{round(percent)}%"
    compactions = context.get("compactions")
    if compactions:
        text += f" ⟳{compactions}"
    if context.get("stale"):
        text += " stale"
    return text


def format_rows(rows: list[RosterRow]) -> str:
    if not rows:
        return "no agents"
    cells = []
    for row in rows:
        desired = row.desired_state
        if row.desired_state_reason:
            desired += f" ({row.desired_state_reason})"
        cells.append([row.identity, row.status, desired, observed_column(row.observed_state),
                      context_column(row.context), row.name or ""])
    widths = [max(len(cell[index]) for cell in cells) for index in range(5)]
    lines = []
    for cell in cells:
        padded = [cell[index].ljust(widths[index]) for index in range(5)]
        lines.append("  ".join(padded + [cell[5]]).rstrip())
    return "\n".join(lines)
