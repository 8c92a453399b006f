"""Codex's harness-context producer (docs/drivers.md §Codex), over app-server notifications.

- ``thread/tokenUsage/updated``: ``usedTokens`` = ``last.totalTokens`` (never ``inputTokens``),
  ``windowTokens`` = ``modelContextWindow`` as Codex reports it (0.171.0 reports 95 % of a
  configured window; the declared value is never used), ``sessionTotalTokens`` =
  ``total.totalTokens`` (cumulative spend, never occupancy), ``usedPercent`` = 100 − Codex's own
  "% context left" (:func:`used_percent`), model and costUsd null (Codex reports neither).
- ``account/rateLimits/updated``: merged sparsely (an absent window never clears a held value),
  joined by ``windowDurationMins`` only — 10080 → sevenDay — never by the primary/secondary
  position; any other duration is dropped. fiveHour stays null: no capture of a real Codex
  account shows a 300-minute window (the lab capture's comes from st2's own fake server's
  ``x-codex-*`` headers), so mapping one would be inference, not measurement. It carries no
  occupancy, so it never writes on its own: the windows ride the next reading.
- ``contextCompaction`` items (``item/started`` and ``item/completed`` of one compaction share an
  item id): one compaction edge per (turnId, item id), over a bounded ring; the deprecated
  ``thread/compacted`` names only the turn and collapses with any item of that turn. Codex names
  no reason, so the trigger is ``unknown``.

Standard library only.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from st2.records.harness_context import CompactionEdge, RateLimits, Reading

BASELINE_TOKENS = 12_000
"""Codex's BASELINE_TOKENS (prompts, fixed tools and room to compact), hardcoded in its TUI's
token display and subtracted from both sides of the fraction; re-verified for 0.171.0 against
the real TUI's own "% context left" footer (``captures/codex/0.171.0/context-left/``)."""
SEVEN_DAY_MINUTES = 10_080
FIVE_HOUR_MINUTES = 300  # the window fiveHour would join, once a real capture shows it (below)
COMPACTION_RING = 64


def rust_round(value: float) -> int:
    """Rust's ``f64::round``: half away from zero (Python's ``round`` rounds half to even)."""
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def remaining_percent(window: int | None, last_total: int) -> int | None:
    """Codex's ``percent_of_context_window_remaining``, mirrored: None without a window; 0 for a
    window at or below the baseline (Codex's own answer, which :func:`used_percent` withholds)."""
    if window is None or window <= 0:
        return None
    if window <= BASELINE_TOKENS:
        return 0
    effective = window - BASELINE_TOKENS
    used = max(0, last_total - BASELINE_TOKENS)
    remaining = max(0, effective - used)
    return rust_round(min(100.0, max(0.0, remaining / effective * 100.0)))


def used_percent(window: int | None, last_total: int | None) -> int | None:
    """100 − Codex's displayed "% context left"; withheld (None) without a window or a numerator,
    and for a window at or below the baseline (a saturation Codex never displayed)."""
    if last_total is None or window is None or window <= BASELINE_TOKENS:
        return None
    remaining = remaining_percent(window, last_total)
    return None if remaining is None else 100 - remaining


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class ContextProducer:
    """Turns frames into :class:`Reading` / :class:`CompactionEdge` values for one thread."""

    def __init__(self) -> None:
        self.five_hour: float | None = None
        self.seven_day: float | None = None
        self._compactions: deque[tuple[str | None, str | None]] = deque(maxlen=COMPACTION_RING)

    def rate_limits(self) -> RateLimits:
        return RateLimits(five_hour=self.five_hour, seven_day=self.seven_day)

    def on_rate_limits(self, params: Any) -> None:
        """Merge one sparse ``account/rateLimits/updated``; writes nothing by itself."""
        limits = params.get("rateLimits") if isinstance(params, dict) else None
        if not isinstance(limits, dict):
            return
        for position in ("primary", "secondary"):
            window = limits.get(position)
            if not isinstance(window, dict):
                continue
            percent = window.get("usedPercent")
            if isinstance(percent, bool) or not isinstance(percent, (int, float)) or not math.isfinite(percent):
                continue
            minutes = window.get("windowDurationMins")
            if minutes == SEVEN_DAY_MINUTES:
                self.seven_day = float(percent)
            # Admitting fiveHour is this one line, together with a capture from a real Codex
            # account under captures/codex/<version>/rate-limits/ whose account/rateLimits/updated
            # carries windowDurationMins 300 (captures/PROVENANCE.md §Codex rate-limit windows):
            #     elif minutes == FIVE_HOUR_MINUTES: self.five_hour = float(percent)

    def on_token_usage(self, params: Any, observed_at_ms: int | None = None) -> Reading | None:
        """The reading of one ``thread/tokenUsage/updated``, or None for a frame without usage."""
        usage = params.get("tokenUsage") if isinstance(params, dict) else None
        if not isinstance(usage, dict):
            return None
        last = usage.get("last") if isinstance(usage.get("last"), dict) else {}
        total = usage.get("total") if isinstance(usage.get("total"), dict) else {}
        used = _count(last.get("totalTokens"))
        window = _count(usage.get("modelContextWindow"))
        return Reading(used_tokens=used, window_tokens=window, used_percent=used_percent(window, used),
                       model=None, cost_usd=None, session_total_tokens=_count(total.get("totalTokens")),
                       rate_limits=self.rate_limits(), observed_at_ms=observed_at_ms)

    def on_compaction(self, turn_id: Any, item_id: Any) -> CompactionEdge | None:
        """An edge for a compaction not yet counted; None for its second sighting."""
        turn = turn_id if isinstance(turn_id, str) else None
        item = item_id if isinstance(item_id, str) else None
        if item is None:  # the deprecated thread/compacted: any key of the turn covers it
            if any(seen_turn == turn for seen_turn, _ in self._compactions):
                return None
        elif (turn, item) in self._compactions or (turn, None) in self._compactions:
            return None
        self._compactions.append((turn, item))
        return CompactionEdge(trigger="unknown")

    def on_frame(self, frame: dict, observed_at_ms: int | None = None):
        """``(reading, edge)`` for one notification frame (either may be None)."""
        method, params = frame.get("method"), frame.get("params")
        if method == "thread/tokenUsage/updated":
            return self.on_token_usage(params, observed_at_ms), None
        if method == "account/rateLimits/updated":
            self.on_rate_limits(params)
            return None, None
        if method in ("item/started", "item/completed") and isinstance(params, dict):
            item = params.get("item")
            if isinstance(item, dict) and item.get("type") == "contextCompaction":
                return None, self.on_compaction(params.get("turnId"), item.get("id"))
        if method == "thread/compacted" and isinstance(params, dict):
            return None, self.on_compaction(params.get("turnId"), None)
        return None, None
