"""Harness context: the numeric ``harness-context`` record (docs/records.md
§Harness context).

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
``agent`` names another seat than the one read for         None, warning logged
``observedAtMs`` more than 60 s in the future              None, warning logged
``observedAtMs`` at least 60 min old                       the reading, ``stale: true``, ageMs
otherwise                                                  the reading, ``stale: false``, ageMs
=========================================================  ===================================

There is no ``unknown`` on this axis and no path from an absence to a number. The projection is
independent of ``harness-state``. The reader imports only the standard library.

The record types are namedtuple classes, not dataclasses: the status-line tee and the Claude
hooks import this module on every firing, where importing dataclasses (with inspect, ast, dis,
tokenize) and typing is not affordable (docs/memory.md §Both install kinds). Each keeps a
dataclass's constructor, field names, defaults, ``repr`` and immutability.
"""

from __future__ import annotations

import math
import os
from collections import namedtuple

from st2.base import harnesses
from st2.catalog import layout
from st2.fs.read import RECORD_LIMIT, read_bounded
from st2.records import decoding

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing (or pathlib) costs a firing milliseconds
    from pathlib import Path
    from typing import Any


def _warn(message: str, *arguments: object) -> None:
    """A warning on the ``st2.records`` logger. logging is imported only when one is emitted:
    its import costs the per-firing status-line tee more than the reading it warns about."""
    import logging

    logging.getLogger("st2.records").warning(message, *arguments)


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

HARNESSES: tuple[str, ...] = harnesses.names()
"""The ``harness`` words a record may carry: every driver's (:mod:`st2.base.harnesses`)."""
TRIGGERS: tuple[str, ...] = ("manual", "auto", "threshold", "overflow", "idle", "unknown")


class RateLimits(namedtuple("RateLimits", ("five_hour", "seven_day"), defaults=(None, None))):
    """Harness-reported, account-scoped window occupancy in percent; absent windows are None.
    ``five_hour``, ``seven_day``: float | None."""

    __slots__ = ()

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


class Reading(namedtuple("Reading", (
        "used_tokens", "window_tokens", "used_percent", "model", "cost_usd", "session_total_tokens", "rate_limits",
        "observed_at_ms", "harness", "compactions", "last_compaction_ms", "last_compaction_trigger", "incarnation",
        "written_at_ms", "schema", "agent", "age_ms", "stale"),
        defaults=(None, None, None, None, None, None, RateLimits(), None, None, 0, None, None, "", 0, None, None, None,
                  False))):
    """The one reading of a seat's context fill, at each of its three stages:

    - a producer's (:meth:`Writer.publish`): the numbers in its harness's own arithmetic, each
      independently optional (None is withheld; the writer never fills it from zero, the previous
      reading or a division of its own); ``observed_at_ms`` is when it was taken (default: now);
    - the record (:func:`decode`, :func:`encode`): the numbers plus ``schema``, ``agent``,
      ``harness`` (possibly a word this version does not recognize), ``compactions``,
      ``last_compaction_ms``, ``last_compaction_trigger`` (already folded onto the closed
      vocabulary), ``incarnation`` and ``written_at_ms``;
    - the projection (:func:`read`): the record with the reader-derived ``age_ms`` and ``stale``.

    Types: the strings ``schema``, ``agent``, ``harness``, ``incarnation`` (None or empty on a
    producer's reading); the ints ``compactions``, ``observed_at_ms``, ``written_at_ms``;
    ``rate_limits`` a :class:`RateLimits`; ``age_ms`` int (None before projection); ``stale``
    bool; the rest optional (None withheld): ``used_tokens``, ``window_tokens``,
    ``session_total_tokens``, ``last_compaction_ms`` int, ``used_percent``, ``cost_usd`` float,
    ``model``, ``last_compaction_trigger`` str."""

    __slots__ = ()

    @property
    def rate_limited(self) -> bool:
        """Fresh Claude evidence that an account window is exhausted."""
        return not self.stale and proves_rate_limited(self.harness, self.rate_limits)

    @property
    def fill_advised(self) -> bool:
        """Whether Doctor advises on this reading's fill (:func:`fill_advised`)."""
        return fill_advised(self.used_percent)

    def stale_at_ms(self) -> int | None:
        """When this projected reading goes stale by age alone, or None when it already is."""
        return None if self.stale else self.observed_at_ms + HARNESS_CONTEXT_STALE_MS

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


def fill_advised(percent: object) -> bool:
    """The context-fill rule: a ``usedPercent`` (a reading's, or a value a journal carried) at or
    above :data:`HARNESS_CONTEXT_WARN_PERCENT`. A withheld or non-numeric percent never is."""
    return (isinstance(percent, (int, float)) and not isinstance(percent, bool)
            and percent >= HARNESS_CONTEXT_WARN_PERCENT)


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


def percent_in_domain(percent: float | None) -> float | None:
    """``usedPercent``'s domain is finite and >= 0; above 100 is a real overrun and is carried
    unclamped (docs/records.md §Harness context). Outside the domain the reading is absent (None), never a definite
    value: ``-5`` must not read as a fill and ``-0.4`` must not round to ``0%``."""
    if percent is None or not math.isfinite(percent) or percent < 0:
        return None
    return percent


def decode(data: bytes) -> Reading:
    """Decode the bytes into a record-stage :class:`Reading` (any schema string, any harness
    word), or raise :class:`decoding.Malformed`."""
    record = decoding.load_object(data)
    return Reading(
        schema=decoding.string(record, "schema"),
        agent=decoding.string(record, "agent"),
        harness=decoding.string(record, "harness"),
        used_tokens=decoding.optional_unsigned(record, "usedTokens"),
        window_tokens=decoding.optional_unsigned(record, "windowTokens"),
        used_percent=percent_in_domain(decoding.optional_number(record, "usedPercent")),
        model=decoding.optional_string(record, "model"),
        cost_usd=decoding.optional_number(record, "costUsd"),
        session_total_tokens=decoding.optional_unsigned(record, "sessionTotalTokens"),
        rate_limits=_rate_limits(record),
        compactions=decoding.unsigned(record, "compactions", default=0),
        last_compaction_ms=decoding.optional_stamp(record, "lastCompactionMs"),
        last_compaction_trigger=_trigger(record),
        incarnation=decoding.string(record, "incarnation", default=""),
        observed_at_ms=decoding.stamp(record, "observedAtMs"),
        written_at_ms=decoding.stamp(record, "writtenAtMs", default=0),
    )


def read(data: bytes | None, now_ms: int, origin: str = "") -> Reading | None:
    """Project the record at ``now_ms`` (table in the module docstring). Never raises.
    ``origin`` (the seat, ``<host>.<identity>``) is the seat whose directory held the record: a
    record naming another seat (neither ``origin`` nor its bare identity — a seat directory copied
    to make a new seat) is not this seat's reading and reads absent. ``origin`` also names the
    record in every warning; without it no seat is fenced."""
    where = f"{origin}: " if origin else ""
    if data is None:
        return None
    try:
        record = decode(data)
    except Exception as error:  # never raise, whatever the bytes
        _warn("st2 harness-context: %snot a readable record: %s", where, error)
        return None
    if record.schema not in ACCEPTED_SCHEMAS:
        _warn("st2 harness-context: %sschema %r is not one this reader accepts", where, record.schema)
        return None
    if record.harness not in HARNESSES:
        _warn("st2 harness-context: %sharness %r is not one this reader can interpret", where, record.harness)
        return None
    if origin and record.agent not in (origin, origin.partition(".")[2]):
        _warn("st2 harness-context: %sthe record names another seat", where)
        return None
    if record.observed_at_ms > now_ms + HARNESS_CONTEXT_FUTURE_SKEW_MS:
        _warn("st2 harness-context: %sobservedAtMs is beyond the future-skew bound", where)
        return None
    age_ms = max(0, now_ms - record.observed_at_ms)
    return record._replace(age_ms=age_ms, stale=age_ms >= HARNESS_CONTEXT_STALE_MS)


def read_file(path: Path, now_ms: int, origin: str = "") -> Reading | None:
    """:func:`read` applied to a file; an unreadable file reads absent with a warning."""
    try:
        data = read_bounded(path, RECORD_LIMIT, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as error:
        _warn("st2 harness-context: reading %s failed: %s", path, error)
        return None
    return read(data, now_ms, origin)


def to_wire(reading: Reading | None) -> dict[str, Any] | None:
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


# --- writer -------------------------------------------------------------------------------------
#
# Write policy (docs/records.md §Write policy), in order, for a reading arriving at ``now``:
#   1. a compaction edge                                     -> write (always lands)
#   2. floor(usedPercent / BUCKET_PERCENT) changed           -> write (a withheld percent has no
#      since the last written reading                           bucket: withheld<->known changes it)
#   3. proven Claude account-window exhaustion changed       -> write
#   4. record older than HARNESS_CONTEXT_HEARTBEAT and the   -> write (re-publishes a fresh reading;
#      reading was taken since the last write                   never re-stamps a stale one)
#   5. otherwise                                             -> skip
# Quantization, not a time floor: writes per window fill are capped at 100 / BUCKET_PERCENT however
# chatty the producer is, which is why one constant serves all five harnesses.


class CompactionEdge(namedtuple("CompactionEdge", ("trigger", "count"), defaults=("unknown", None))):
    """One compaction as a producer saw it (``trigger`` str). ``count`` is the harness-durable
    count when the harness's own session store answers; None means st2 counts
    (incarnation-scoped)."""

    __slots__ = ()


def bucket(used_percent: float | None) -> int | None:
    """The write bucket of a percent; a withheld (or non-finite) percent has none."""
    if used_percent is None or not math.isfinite(used_percent):
        return None
    return math.floor(used_percent / HARNESS_CONTEXT_BUCKET_PERCENT)


def _check_reading(reading: Reading) -> None:
    for name in ("used_tokens", "window_tokens", "session_total_tokens"):
        value = getattr(reading, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise ValueError(f"{name} must be a non-negative integer or None (withheld)")
    for name in ("used_percent", "cost_usd"):
        value = getattr(reading, name)
        if value is not None and (isinstance(value, bool) or not math.isfinite(value)):
            raise ValueError(f"{name} must be a finite number or None (withheld)")


def _current(seat_dir: Path) -> Reading | None:
    """The on-disk record this writer may continue, or None. A record no reader can interpret
    (unparseable, foreign schema, unrecognized harness) is not continued."""
    try:
        record = decode(read_bounded(os.path.join(seat_dir, RECORD_NAME), RECORD_LIMIT, follow_symlinks=False))
    except (OSError, decoding.Malformed):
        return None
    if record.schema not in ACCEPTED_SCHEMAS or record.harness not in HARNESSES:
        return None
    return record


def due(current: Reading, reading: Reading, harness: str, now_ms: int) -> str | None:
    """Which policy clause (2-4) makes ``reading`` due against the on-disk ``current`` record,
    or None to skip. The compaction edge (clause 1) is decided by the caller."""
    if bucket(current.used_percent) != bucket(reading.used_percent):
        return "bucket"
    if proves_rate_limited(current.harness, current.rate_limits) != proves_rate_limited(harness, reading.rate_limits):
        return "rate-limited"
    # A record stamped beyond the skew bound would suppress every heartbeat until the clock caught
    # up, so it counts as old.
    old = (current.written_at_ms > now_ms + HARNESS_CONTEXT_FUTURE_SKEW_MS
           or now_ms - current.written_at_ms >= HARNESS_CONTEXT_HEARTBEAT_MS)
    observed_at = reading.observed_at_ms if reading.observed_at_ms is not None else now_ms
    taken_since_last_write = observed_at > current.observed_at_ms and observed_at >= min(current.written_at_ms, now_ms)
    if old and taken_since_last_write:
        return "heartbeat"
    return None


class Writer:
    """The writer a driver process holds over one seat's context record. Several processes of one
    session may hold writers over the same record, so every publication takes the record's
    cross-process lock (``.harness-context.lock``) and decides against the on-disk record.
    ``incarnation`` is provenance only: nothing is refused on it, so a straggler lands."""

    def __init__(self, seat_dir: Path, agent: str, harness: str, incarnation: str, clock, policy=None,
                 withheld: bool = False) -> None:
        """``policy`` replaces :func:`due` (clauses 2-4) and exists for the write-policy replay
        benchmark, which runs the rejected policies of docs/records.md §Why bucket quantization through this same writer.
        ``withheld``: the harness build is not a measured one (docs/drivers.md §Measured builds), so
        its numbers mean nothing st2 has pinned; :meth:`publish` writes nothing at all."""
        if harness not in HARNESSES:
            raise ValueError(f"harness {harness!r} is not recognized; its numbers would be uninterpretable")
        self.seat_dir = seat_dir
        self.agent = agent
        self.harness = harness
        self.incarnation = incarnation
        self.clock = clock
        self.policy = policy if policy is not None else due
        self.withheld = withheld
        self.last_written: Reading | None = None

    def publish(self, reading: Reading | None, edge: CompactionEdge | None = None) -> bool:
        """Apply the write policy to ``reading`` and/or ``edge``; return whether a write landed
        (never for a ``withheld`` writer).
        A reading replaces the previous one wholesale; an edge with no reading carries the
        previous numbers and does not re-stamp ``observedAtMs``."""
        if (reading is None and edge is None) or self.withheld:
            return False
        if reading is not None:
            _check_reading(reading)
        if edge is not None and edge.count is not None and (isinstance(edge.count, bool) or edge.count < 0):
            raise ValueError("a compaction count must be a non-negative integer")
        from st2.fs.lock import record_lock

        with record_lock(os.path.join(self.seat_dir, RECORD_NAME)):
            current = _current(self.seat_dir)
            now_ms = self.clock.wall_ms()
            if edge is None and current is not None and reading is not None:
                if self.policy(current, reading, self.harness, now_ms) is None:
                    return False
            record = self._next_record(current, reading, edge, now_ms)
            self._write(record)
            self.last_written = record
            return True

    def _next_record(self, current: Reading | None, reading: Reading | None, edge: CompactionEdge | None,
                     now_ms: int) -> Reading:
        if reading is not None:
            numbers = reading
            observed_at_ms = reading.observed_at_ms if reading.observed_at_ms is not None else now_ms
        elif current is not None:
            numbers = current
            observed_at_ms = current.observed_at_ms
        else:
            numbers = Reading()
            observed_at_ms = now_ms
        previous_count = current.compactions if current is not None else 0
        if edge is not None:
            compactions = edge.count if edge.count is not None else previous_count + 1
            last_compaction_ms: int | None = now_ms
            trigger: str | None = edge.trigger if edge.trigger in TRIGGERS else "unknown"
        else:
            compactions = previous_count
            last_compaction_ms = current.last_compaction_ms if current is not None else None
            trigger = current.last_compaction_trigger if current is not None else None
        written_at_ms = now_ms
        if current is not None and current.written_at_ms <= now_ms + HARNESS_CONTEXT_FUTURE_SKEW_MS:
            # Strictly monotonic per record: every landed write is byte-distinct, even against a
            # same-millisecond predecessor. A stamp beyond the skew bound is never inherited.
            written_at_ms = max(now_ms, current.written_at_ms + 1)
        percent = numbers.used_percent
        cost = numbers.cost_usd
        return Reading(
            schema=SCHEMA,
            agent=self.agent,
            harness=self.harness,
            used_tokens=numbers.used_tokens,
            window_tokens=numbers.window_tokens,
            used_percent=float(percent) if percent is not None else None,
            model=numbers.model,
            cost_usd=float(cost) if cost is not None else None,
            session_total_tokens=numbers.session_total_tokens,
            rate_limits=numbers.rate_limits,
            compactions=compactions,
            last_compaction_ms=last_compaction_ms,
            last_compaction_trigger=trigger,
            incarnation=self.incarnation,
            observed_at_ms=observed_at_ms,
            written_at_ms=written_at_ms,
        )

    def _write(self, record: Reading) -> None:
        from st2.records.placement import publish_record

        publish_record(self.seat_dir, RECORD_NAME, encode(record), STAGING_NAME, mode=0o600)


def encode(record: Reading) -> bytes:
    """The record's bytes: one compact JSON object, newline-terminated."""
    import json

    return json.dumps(record.to_json(), separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def remove(seat_dir: Path) -> bool:
    """Remove the record at a session boundary (the relaunch claim): the new incarnation reads
    "no context yet" rather than the previous one's fill. Taken under this record's own lock.
    Returns whether a record was removed; a record already gone is success."""
    from st2.fs.lock import record_lock

    path = os.path.join(seat_dir, RECORD_NAME)
    with record_lock(path):
        try:
            os.unlink(path)
        except FileNotFoundError:
            return False
    return True
