"""The human `st2 agents` line: identity, presence, desired state, then the prefixed
``obs:`` and ``ctx:`` columns so two bare words never sit ambiguously in one row."""

from __future__ import annotations

from st2.declarations.diagnostics import one_line
from st2.records.harness_context import Reading
from st2.records.harness_state import ObservedState
from st2.roster.row import RosterRow


def observed_column(observed: ObservedState | None) -> str:
    """``obs:-`` no record; ``obs:unknown(<reason>)`` derived unknown; else the state, with
    ``+blocked:<on>`` when the harness is blocked on something."""
    if observed is None:
        return "obs:-"
    if observed.is_unknown:
        reason = observed.reason
        return f"obs:unknown({reason})" if reason else "obs:unknown"
    text = f"obs:{observed.state}"
    blocked_on = observed.blocked_on
    if blocked_on and blocked_on != "none":
        text += f"+blocked:{blocked_on}"
    return text


PERCENT_SHOWN_MAX = 999  # past this a fill prints in exponent form, so the column stays narrow


def percent_text(percent: float) -> str:
    """A context fill for a human column, rounded for width and never clamped: the whole percent
    up to 999 (``586%``), past it two significant digits in a short exponent form (``1.2e3%``,
    ``1e308%``), so a real overrun still says how large it is."""
    whole = round(percent)
    if whole <= PERCENT_SHOWN_MAX:
        return f"{whole}%"
    mantissa, exponent = f"{percent:.2g}".split("e")
    return f"{mantissa}e{int(exponent)}%"


def context_column(context: Reading | None) -> str:
    """``ctx:-`` no record, ``ctx:?`` a record whose percent was withheld, else the percent
    rounded for width and never clamped (:func:`percent_text`), ``⟳N``
    compactions, ``stale`` suffix."""
    if context is None:
        return "ctx:-"
    percent = context.used_percent
    text = "ctx:?" if percent is None else f"ctx:{percent_text(percent)}"
    compactions = context.compactions
    if compactions:
        text += f" ⟳{compactions}"
    if context.stale:
        text += " stale"
    return text


HEADER = ["AGENT", "PRESENCE", "DESIRED", "OBSERVED", "CONTEXT"]
ENRICHED_HEADER = ["LAST-ACTIVITY", "INBOX"]


def activity_column(last_activity_ms: float | None, now_ms: int | None) -> str:
    """``-`` none, else how long ago (``42s``, ``5m``, ``3h``, ``2d``)."""
    if last_activity_ms is None or now_ms is None:
        return "-"
    seconds = max(0, int((now_ms - last_activity_ms) // 1000))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def worktree_text(reading) -> str:
    """One seat's worktree in words (``st2 top``'s detail pane), from its reading
    (:class:`st2.worktree.state.Reading`, None: none here): path, branch and state, then dirty
    entries, ahead/behind its upstream and the last commit's age; a held one's reason."""
    if reading is None:
        return "none on this host"
    record = reading.record
    text = f"{record.path} on {record.branch}, {record.state}"
    if record.state != "ready":
        return f"{text}: {one_line(record.reason or '')}"
    parts = [f"{record.dirty} dirty" if record.dirty is not None else "dirty unknown"]
    if record.upstream is not None:
        parts.append(f"ahead {record.ahead} behind {record.behind} of {record.upstream}")
    else:
        parts.append("no upstream")
    if reading.last_commit_age_ms is not None:
        parts.append("last commit " + activity_column(0, reading.last_commit_age_ms))
    return f"{text}: {', '.join(parts)}"


def format_rows(rows: list[RosterRow], *, enrich: bool = False, now_ms: int | None = None) -> str:
    """A header row, then one aligned line per seat; the name (free text) comes last. With
    ``enrich`` two columns follow the context: time since the last activity and unread mail."""
    if not rows:
        return "no agents"
    header = HEADER + (ENRICHED_HEADER if enrich else []) + ["NAME"]
    cells = [header]
    for row in rows:
        desired = row.desired_state
        if row.desired_state_reason:
            # An invalid seat's reason is its first diagnostic: its help line and any control
            # character a declared value carried are folded onto the row (one line per seat).
            desired += f" ({one_line(row.desired_state_reason)})"
        cell = [row.identity, row.status, desired, observed_column(row.observed_state),
                context_column(row.context)]
        if enrich:
            cell += [activity_column(row.last_activity_ms, now_ms), str(row.inbox)]
        cells.append(cell + [row.name or ""])
    count = len(header) - 1
    widths = [max(len(cell[index]) for cell in cells) for index in range(count)]
    lines = []
    for cell in cells:
        padded = [cell[index].ljust(widths[index]) for index in range(count)]
        lines.append("  ".join(padded + [cell[count]]).rstrip())
    return "\n".join(lines)
