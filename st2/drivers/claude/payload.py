"""The Claude status-line payload → one harness-context reading (docs/drivers.md §Status-line tee).

Claude Code writes one JSON object to the status-line command's stdin on every render. The
arithmetic is Claude's own, read off the payload, never recomputed:

=================  =============================================  ==============================
record field       payload source                                 withheld (null) when
=================  =============================================  ==============================
usedTokens         ``context_window.total_input_tokens``          ``current_usage`` is null
windowTokens       ``context_window.context_window_size``         absent / not an integer
usedPercent        ``context_window.used_percentage`` (Claude's   ``current_usage`` is null
                   own integer, clamped 0..100 by Claude)
model              ``model.id``                                   absent
costUsd            ``cost.total_cost_usd`` (session total)        absent
rateLimits         ``rate_limits.{five_hour,seven_day}``          absent (API-key sessions)
                   ``.used_percentage``
sessionTotalTokens —                                              always: the payload's total_*
                                                                  keys describe the last
                                                                  response, not the session
=================  =============================================  ==============================

The trap this module exists for: before the session's first API response (and, on 2.1.328,
right after a compaction) ``current_usage`` is null while ``total_input_tokens`` reads 0 — a zero
Claude's payload builder derives from the absence. It is never a measurement, so usedTokens is
withheld rather than published as 0. ``total_input_tokens`` is input + cache creation + cache
read of the last response (measured on 2.1.197 and 2.1.328: 9900 + 300 + 1200 = 11400), not a
running total and not including output.

Standard library and the harness-context record module only (hot path).
"""

from __future__ import annotations

import math

from st2.records.harness_context import RateLimits, Reading

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing costs a hook firing milliseconds
    from typing import Any


def _count(value: Any) -> int | None:
    """A non-negative JSON integer (Claude writes token counts as integers), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return value


def _object(container: Any, key: str) -> dict[str, Any]:
    value = container.get(key) if isinstance(container, dict) else None
    return value if isinstance(value, dict) else {}


def rate_limits(payload: Any) -> RateLimits:
    """The account windows' used percentages; an absent window is None."""
    limits = _object(payload, "rate_limits")
    return RateLimits(
        five_hour=_number(_object(limits, "five_hour").get("used_percentage")),
        seven_day=_number(_object(limits, "seven_day").get("used_percentage")),
    )


def reading(payload: Any, observed_at_ms: int | None = None) -> Reading:
    """Map one status-line payload (already decoded) to a :class:`Reading`. Never raises: a
    field of the wrong shape is withheld, never guessed."""
    window = _object(payload, "context_window")
    known = isinstance(window.get("current_usage"), dict)
    model = _object(payload, "model").get("id")
    return Reading(
        used_tokens=_count(window.get("total_input_tokens")) if known else None,
        window_tokens=_count(window.get("context_window_size")),
        used_percent=_number(window.get("used_percentage")) if known else None,
        model=model if isinstance(model, str) and model else None,
        cost_usd=_number(_object(payload, "cost").get("total_cost_usd")),
        session_total_tokens=None,
        rate_limits=rate_limits(payload),
        observed_at_ms=observed_at_ms,
    )


def version(payload: Any) -> str | None:
    """The Claude Code build that wrote the payload (``version``), when it says."""
    value = payload.get("version") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None
