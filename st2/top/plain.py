"""One plain frame of the fleet view (`st2 top --once`, or whenever stdout is not a terminal):
the usage header, then one aligned line per seat in view order, then the recent fleet events.
Standard text, no escapes."""

from __future__ import annotations

from st2.top.model import COLUMNS, Filters, Fleet, relaunch_queue_line
from st2.top.usage_view import SAMPLING_OFF, UsageView

GAUGE_WIDTH = 20
SPARK = "▁▂▃▄▅▆▇█"


def gauge(label: str, percent: float | None, width: int = GAUGE_WIDTH) -> str:
    """``5h [#######-------------]  35%``; ``?`` when the window is unknown."""
    if percent is None:
        return f"{label} [{'?' * width}]    ?"
    filled = max(0, min(width, round(width * percent / 100)))
    return f"{label} [{'#' * filled}{'-' * (width - filled)}] {percent:4.0f}%"


def sparkline(values: list[float]) -> str:
    """One block character per sample, scaled 0–100 %."""
    return "".join(SPARK[max(0, min(len(SPARK) - 1, int(value / 100 * (len(SPARK) - 1) + 0.5)))] for value in values)


def header_lines(usage: UsageView) -> list[str]:
    lines = [f"{gauge('5h', usage.five_hour_pct)}   {gauge('7d', usage.seven_day_pct)}   verdict {usage.verdict_word}"]
    if usage.sampling:
        lines.append(f"history {sparkline(usage.spark[-60:]) or '(no samples in the last hours)'}")
    else:
        lines.append(SAMPLING_OFF)
    return lines + account_lines(usage)


def account_lines(usage: UsageView) -> list[str]:
    """One line per declared account: its name, both windows and its verdict word."""
    width = max((len(account.name) for account in usage.accounts), default=0)
    return [f"account {account.name.ljust(width)}   {gauge('5h', account.five_hour_pct)}   "
            f"{gauge('7d', account.seven_day_pct)}   verdict {account.verdict_word}" for account in usage.accounts]


def frame(fleet: Fleet, usage: UsageView, now_ms: int, filters: Filters | None = None,
          sort: str | None = None, reverse: bool = False, events=None) -> str:
    """``events`` (a :class:`st2.top.events_view.RecentEvents`) ends the frame with its pane."""
    seats = fleet.visible(filters or Filters(), now_ms, sort, reverse)
    cells = [list(COLUMNS)] + [list(seat.cells(now_ms)) for seat in seats]
    widths = [max(len(row[index]) for row in cells) for index in range(len(COLUMNS))]
    lines = header_lines(usage)
    lines.append(f"{len(seats)} of {len(fleet.seats)} seats; "
                 f"{sum(seat.blocked_on_human for seat in seats)} blocked on a human")
    queue = relaunch_queue_line(fleet.seats.values(), now_ms)
    if queue is not None:
        lines.append(queue)
    for row, seat in zip(cells, [None] + seats):
        mark = "!" if seat is not None and seat.blocked_on_human else " "
        lines.append((mark + " " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths))).rstrip())
    for problem in fleet.problems + fleet.inventory_errors:
        lines.append(f"warning: {problem}")
    if events is not None:
        lines += events.lines()
    return "\n".join(lines)
