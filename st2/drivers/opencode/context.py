"""opencode's harness-context producer (docs/drivers.md §opencode, docs/drivers.md §Compaction accounting), over the SSE
events of ``GET /event`` joined with the window ``GET /config/providers`` reports.

- Publish on one condition only: a ``message.updated`` of an assistant message that is not a
  compaction summary (``summary is True``; a user message's ``summary`` is an object and truthy,
  which is not a summary) and whose ``tokens`` carries the ``total`` KEY (the first update of a
  message carries zeros and no total, never read as zero). ``usedTokens`` = ``tokens.total``;
  ``model`` = the message's own ``providerID/modelID``, the key its window is cached under;
  ``windowTokens`` = that model's ``limit.context``; ``usedPercent`` = used / window × 100,
  unrounded and unclamped. A model the providers answer has not named withholds window and
  percent (and makes the pull due: :attr:`ContextProducer.window_due`).
- ``session.updated`` is folded in and rides out with the next numerator: its ``info.tokens`` is
  cumulative with no total key — summed here into ``sessionTotalTokens``, never occupancy — and
  ``info.cost`` is ``costUsd``. Last writer wins across sessions (v1).
- ``session.compacted`` is one compaction edge, trigger ``unknown`` (it carries only sessionID).
- No heartbeat: nothing here re-publishes a numerator no one re-took.

Standard library only.
"""

from __future__ import annotations

import math
from typing import Any

from st2.records.harness_context import CompactionEdge, Reading


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def windows_from_providers(answer: Any) -> dict[str, int]:
    """``{"providerID/modelID": limit.context}`` from a ``GET /config/providers`` answer."""
    providers = answer.get("providers") if isinstance(answer, dict) else None
    found: dict[str, int] = {}
    for provider in providers if isinstance(providers, list) else ():
        if not isinstance(provider, dict) or not isinstance(provider.get("id"), str):
            continue
        models = provider.get("models")
        for model_id, model in (models.items() if isinstance(models, dict) else ()):
            limit = model.get("limit") if isinstance(model, dict) else None
            context = _count(limit.get("context")) if isinstance(limit, dict) else None
            if context:
                found[f"{provider['id']}/{model_id}"] = context
    return found


def is_summary(info: dict) -> bool:
    """The compaction summary: an assistant message with ``summary`` exactly ``true``."""
    return info.get("role") == "assistant" and info.get("summary") is True


def session_total(tokens: Any) -> int | None:
    """The sum of a ``session.updated`` ``info.tokens`` (cumulative; no total key of its own)."""
    if not isinstance(tokens, dict):
        return None
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    parts = [tokens.get("input"), tokens.get("output"), tokens.get("reasoning"), cache.get("read"), cache.get("write")]
    counts = [_count(part) for part in parts]
    return None if any(count is None for count in counts) else sum(counts)


class ContextProducer:
    def __init__(self, windows: dict[str, int] | None = None) -> None:
        self.windows: dict[str, int] = dict(windows or {})
        self.session_total: int | None = None
        self.cost: float | None = None
        self.window_due = False
        self._last: tuple[str, int] | None = None

    def on_providers(self, answer: Any) -> None:
        self.windows = windows_from_providers(answer)
        self.window_due = False

    def on_event(self, event: dict, observed_at_ms: int | None = None):
        """``(reading, edge)`` for one SSE event (either may be None)."""
        kind, properties = event.get("type"), event.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        if kind == "session.compacted":
            return None, CompactionEdge(trigger="unknown")
        info = properties.get("info") if isinstance(properties.get("info"), dict) else None
        if info is None:
            return None, None
        if kind == "session.updated":
            total = session_total(info.get("tokens"))
            if total is not None:
                self.session_total = total
            cost = info.get("cost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0:
                self.cost = float(cost)
            return None, None
        if kind != "message.updated" or info.get("role") != "assistant" or is_summary(info):
            return None, None
        tokens = info.get("tokens")
        if not isinstance(tokens, dict) or "total" not in tokens:
            return None, None
        used = _count(tokens["total"])
        provider, model_id = info.get("providerID"), info.get("modelID")
        if used is None or not isinstance(provider, str) or not isinstance(model_id, str):
            return None, None
        key = (str(info.get("id")), used)
        if key == self._last:  # the same finished message again: nothing was re-taken
            return None, None
        self._last = key
        model = f"{provider}/{model_id}"
        window = self.windows.get(model)
        if window is None:
            self.window_due = True
        percent = used / window * 100.0 if window else None
        return Reading(used_tokens=used, window_tokens=window, used_percent=percent, model=model, cost_usd=self.cost,
                       session_total_tokens=self.session_total, observed_at_ms=observed_at_ms), None


AUTH_ERROR_NAMES = ("ProviderAuthError",)


def credential_rejected(error: Any) -> bool:
    """Whether an assistant message's typed ``error`` says the provider rejected the credential:
    ``ProviderAuthError``, or an ``APIError`` whose ``data.statusCode`` is 401 — what 1.18.33
    actually yields for an HTTP 401 from the provider in the lab. Never prose, never a 429."""
    if not isinstance(error, dict):
        return False
    if error.get("name") in AUTH_ERROR_NAMES:
        return True
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    return error.get("name") == "APIError" and data.get("statusCode") == 401
