"""Harness context: the numeric ``harness-context`` record (seed 000; seed 003 "Harness context
discipline").

One JSON object, newline-terminated, beside ``harness-state``::

    schema, agent, harness, usedTokens, windowTokens, usedPercent, model, costUsd,
    sessionTotalTokens, rateLimits{fiveHour, sevenDay}, compactions, lastCompactionMs,
    lastCompactionTrigger, incarnation, observedAtMs, writtenAtMs

``harness`` is the discriminator for the arithmetic. The fill triple is independently optional
(null = withheld) and ``usedPercent`` is carried raw: above 100 is a real overrun, never clamped.
``observedAtMs`` is when the reading was taken; ``writtenAtMs`` when the record was written
(strictly monotonic per record). ``incarnation`` is provenance, never a fence.

Reading (:func:`read`, pure, in evaluation order):

=========================================================  ===================================
evidence                                                   projection
=========================================================  ===================================
no record                                                  None
unparseable, or a schema other than v1/v2                  None, warning logged
unrecognized harness                                       None, warning logged
``observedAtMs`` more than 60 s in the future              None, warning logged
``observedAtMs`` at least 60 min old                       the reading, ``stale: true``, ageMs
otherwise                                                  the reading, ``stale: false``, ageMs
=========================================================  ===================================

There is no ``unknown`` on this axis and no path from an absence to a number. The projection is
independent of ``harness-state``. The reader imports only the standard library.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from st2.catalog import layout
from st2.records import decoding

logger = logging.getLogger("st2.records")

SCHEMA = "st2.harness-context.v1"
SCHEMA_V2 = "st2.harness-context.v2"
ACCEPTED_SCHEMAS: tuple[str, ...] = (SCHEMA, SCHEMA_V2)
RECORD_NAME = layout.HARNESS_CONTEXT
STAGING_NAME = layout.HARNESS_CONTEXT_STAGING

HARNESS_CONTEXT_STALE_MS = 60 * 60 * 1000
"""Past this age a reading is returned marked stale, with its age (never derived away)."""
HARNESS_CONTEXT_FUTURE_SKEW_MS = 60 * 1000
"""Beyond this the writer's clock is untrusted and the record reads absent."""
HARNESS_CONTEXT_BUCKET_PERCENT = 1.0
"""The window fraction, in percent, that defines a write bucket: one constant for all harnesses."""
HARNESS_CONTEXT_WARN_PERCENT = 80.0
"""At or above this reading Doctor advises. st2's attention threshold, not a compaction forecast."""
HARNESS_CONTEXT_HEARTBEAT_MS = 300 * 1000
"""The longest interval between writes while a fresh reading is available. Equal in value to the
harness-state refresh on purpose, but its own constant."""

HARNESSES: tuple[str, ...] = ("claude", "codex", "pi", "omp", "opencode")
TRIGGERS: tuple[str, ...] = ("manual", "auto", "threshold", "overflow", "idle", "unknown")


@dataclass(frozen=True)
class RateLimits:
    """Harness-reported, account-scoped window occupancy in percent; absent windows are None."""

    five_hour: float | None = None
    seven_day: float | None = None

    def is_exhausted(self) -> bool:
        return any(
            percent is not None and math.isfinite(percent) and percent >= 100.0
            for percent in (self.five_hour, self.seven_day)
        )

    def to_json(self) -> dict[str, float | None]:
        return {"fiveHour": self.five_hour, "sevenDay": self.seven_day}


def proves_rate_limited(harness: str, rate_limits: RateLimits) -> bool:
    """Whether account-window evidence proves the harness cannot progress. Only Claude: Codex can
    continue through credits, and this record carries no credit metadata to tell."""
    return harness == "claude" and rate_limits.is_exhausted()


@dataclass(frozen=True)
class Record:
    """The decoded record, before projection. ``harness`` may be a word this version does not
    recognize; ``last_compaction_trigger`` is already folded onto the closed vocabulary."""

    schema: str
    agent: str
    harness: str
    used_tokens: int | None
    window_tokens: int | None
    used_percent: float | None
    model: str | None
    cost_usd: float | None
    session_total_tokens: int | None
    rate_limits: RateLimits
    compactions: int
    last_compaction_ms: int | None
    last_compaction_trigger: str | None
    incarnation: str
    observed_at_ms: int
    written_at_ms: int

    def to_json(self) -> dict[str, Any]:
        """The record's JSON object in wire order; withheld values stay null."""
        return {
            "schema": self.schema,
            "agent": self.agent,
            "harness": self.harness,
            "usedTokens": self.used_tokens,
            "windowTokens": self.window_tokens,
            "usedPercent": self.used_percent,
            "model": self.model,
            "costUsd": self.cost_usd,
            "sessionTotalTokens": self.session_total_tokens,
            "rateLimits": self.rate_limits.to_json(),
            "compactions": self.compactions,
            "lastCompactionMs": self.last_compaction_ms,
            "lastCompactionTrigger": self.last_compaction_trigger,
            "incarnation": self.incarnation,
            "observedAtMs": self.observed_at_ms,
            "writtenAtMs": self.written_at_ms,
        }


def _rate_limits(record: dict[str, Any]) -> RateLimits:
    if "rateLimits" not in record:
        return RateLimits()
    value = record["rateLimits"]
    if not isinstance(value, dict):
        raise decoding.Malformed("rateLimits is not an object")
    return RateLimits(
        five_hour=decoding.optional_number(value, "fiveHour"),
        seven_day=decoding.optional_number(value, "sevenDay"),
    )


def _trigger(record: dict[str, Any]) -> str | None:
    value = record.get("lastCompactionTrigger")
    if value is None:
        return None
    if not isinstance(value, str):
        raise decoding.Malformed("lastCompactionTrigger is not a string")
    # Additive-tolerant: a future word decodes as unknown, never as a definite trigger.
    return value if value in TRIGGERS else "unknown"


def decode(data: bytes) -> Record:
    """Decode the bytes into a :class:`Record` (any schema string, any harness word), or raise
    :class:`decoding.Malformed`."""
    record = decoding.load_object(data)
    return Record(
        schema=decoding.string(record, "schema"),
        agent=decoding.string(record, "agent"),
        harness=decoding.string(record, "harness"),
        used_tokens=decoding.optional_unsigned(record, "usedTokens"),
        window_tokens=decoding.optional_unsigned(record, "windowTokens"),
        used_percent=decoding.optional_number(record, "usedPercent"),
        model=decoding.optional_string(record, "model"),
        cost_usd=decoding.optional_number(record, "costUsd"),
        session_total_tokens=decoding.optional_unsigned(record, "sessionTotalTokens"),
        rate_limits=_rate_limits(record),
        compactions=decoding.unsigned(record, "compactions", default=0),
        last_compaction_ms=decoding.optional_unsigned(record, "lastCompactionMs"),
        last_compaction_trigger=_trigger(record),
        incarnation=decoding.string(record, "incarnation", default=""),
        observed_at_ms=decoding.unsigned(record, "observedAtMs"),
        written_at_ms=decoding.unsigned(record, "writtenAtMs", default=0),
    )


@dataclass(frozen=True)
class ContextReading:
    """What a consumer sees: the record's numbers as published (never clamped, never divided
    out of the operands), with the reader-derived age and staleness."""

    harness: str
    used_tokens: int | None
    window_tokens: int | None
    used_percent: float | None
    model: str | None
    cost_usd: float | None
    session_total_tokens: int | None
    rate_limits: RateLimits
    compactions: int
    last_compaction_ms: int | None
    last_compaction_trigger: str | None
    observed_at_ms: int
    age_ms: int
    stale: bool
    incarnation: str = ""

    @property
    def rate_limited(self) -> bool:
        """Fresh Claude evidence that an account window is exhausted."""
        return not self.stale and proves_rate_limited(self.harness, self.rate_limits)


def read(data: bytes | None, now_ms: int) -> ContextReading | None:
    """Project the record at ``now_ms`` (table in the module docstring). Never raises."""
    if data is None:
        return None
    try:
        record = decode(data)
    except Exception as error:  # never raise, whatever the bytes
        logger.warning("st2 harness-context: not a readable record: %s", error)
        return None
    if record.schema not in ACCEPTED_SCHEMAS:
        logger.warning("st2 harness-context: schema %r is not one this reader accepts", record.schema)
        return None
    if record.harness not in HARNESSES:
        logger.warning("st2 harness-context: harness %r is not one this reader can interpret", record.harness)
        return None
    if record.observed_at_ms > now_ms + HARNESS_CONTEXT_FUTURE_SKEW_MS:
        logger.warning("st2 harness-context: observedAtMs is beyond the future-skew bound")
        return None
    age_ms = max(0, now_ms - record.observed_at_ms)
    return ContextReading(
        harness=record.harness,
        used_tokens=record.used_tokens,
        window_tokens=record.window_tokens,
        used_percent=record.used_percent,
        model=record.model,
        cost_usd=record.cost_usd,
        session_total_tokens=record.session_total_tokens,
        rate_limits=record.rate_limits,
        compactions=record.compactions,
        last_compaction_ms=record.last_compaction_ms,
        last_compaction_trigger=record.last_compaction_trigger,
        observed_at_ms=record.observed_at_ms,
        age_ms=age_ms,
        stale=age_ms >= HARNESS_CONTEXT_STALE_MS,
        incarnation=record.incarnation,
    )


def read_file(path: Path, now_ms: int) -> ContextReading | None:
    """:func:`read` applied to a file; an unreadable file reads absent with a warning."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return None
    except OSError as error:
        logger.warning("st2 harness-context: reading %s failed: %s", path, error)
        return None
    return read(data, now_ms)


def to_wire(reading: ContextReading | None) -> dict[str, Any] | None:
    """The roster's ``context`` object in the original's field order, or None. ``incarnation``
    and ``writtenAtMs`` are deliberately not exposed."""
    if reading is None:
        return None
    return {
        "harness": reading.harness,
        "usedTokens": reading.used_tokens,
        "windowTokens": reading.window_tokens,
        "usedPercent": reading.used_percent,
        "model": reading.model,
        "costUsd": reading.cost_usd,
        "sessionTotalTokens": reading.session_total_tokens,
        "rateLimits": reading.rate_limits.to_json(),
        "rateLimited": reading.rate_limited,
        "compactions": reading.compactions,
        "lastCompactionMs": reading.last_compaction_ms,
        "lastCompactionTrigger": reading.last_compaction_trigger,
        "observedAtMs": reading.observed_at_ms,
        "ageMs": reading.age_ms,
        "stale": reading.stale,
    }
