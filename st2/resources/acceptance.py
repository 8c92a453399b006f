"""The host's one acceptance core: a provider result (periodic or demanded) against the binding's
current state record gives the next record (docs/resources.md §Host acceptance).

Pure: no clock, no files. :func:`accept` is the transition function; each edge is an
:class:`Outcome`:

============================================  ===========  =======================================
result                                        outcome      next record
============================================  ===========  =======================================
any, from a generation below the record's     FENCED       none (the record stands)
Published, facts out of bounds or untyped     REFUSED      lastFailure refused-output, facts kept
Published, host digest differs (or first)     CHANGED      revision + 1, new facts and digest
Published, same host digest                   SAME         observed time, failure cleared (none
                                                           while the record is healthy and younger
                                                           than :data:`HEARTBEAT_MS`)
Unchanged, this generation published before   SAME         the same
Unchanged, nothing published this generation  REFUSED      lastFailure refused-output (never a
                                                           fabricated unchanged)
Failed (or the host's own failure)            FAILED       lastFailure set, facts kept
============================================  ===========  =======================================

Only CHANGED is a transition a subscriber is told about. The digest is always the host's
(:func:`st2.resources.state.digest_facts`); a runtime's own digest or stamp never gets here
(:mod:`st2.resources.protocol` refuses the line).
"""

from __future__ import annotations

import enum
from collections import namedtuple

from st2.resources import state as records
from st2.resources.protocol import FAILED, PUBLISHED, UNCHANGED

Binding = namedtuple("Binding", ("agent", "name", "uri"))


class Outcome(enum.Enum):
    CHANGED = "changed"
    SAME = "same"
    FAILED = "failed"
    REFUSED = "refused"
    FENCED = "fenced"


Accepted = namedtuple("Accepted", ("outcome", "state", "reason"))
"""``state`` is the record to publish (None: leave the record as it is); ``reason`` the one line
for a refusal."""

HEARTBEAT_MS = 60 * 1000
"""A healthy binding's unchanged observation re-stamps its record at most this often: a fleet of
bindings observed every few seconds is not a write per binding per observation, and the record
stays far inside the staleness horizon (:data:`st2.resources.state.STALE_MS`)."""


def _same(current: records.State | None, proposed: records.State, now_ms: int) -> Accepted:
    quiet = (current is not None and current.last_failure is None and current.uri == proposed.uri
             and current.generation == proposed.generation and current.host_observed_at_ms is not None
             and 0 <= now_ms - current.host_observed_at_ms < HEARTBEAT_MS)
    return Accepted(Outcome.SAME, None if quiet else proposed, None)


def _empty(binding: Binding, generation: int) -> records.State:
    return records.State(binding.agent, binding.name, binding.uri, generation, 0, None, None, {}, None, 0)


def failed(current: records.State | None, binding: Binding, generation: int, kind: str, message: str,
           now_ms: int) -> Accepted:
    """The FAILED edge: the host's own failure (timeout, exit, refusal) or a runtime's ``Failed``."""
    if current is not None and generation < current.generation:
        return Accepted(Outcome.FENCED, None, f"generation {generation} is below the record's {current.generation}")
    base = current if current is not None else _empty(binding, generation)
    failure = records.Failure(kind, message[:records.MESSAGE_LIMIT], now_ms)
    # The record's uri names where its facts came from: a failure after the binding's URI changed
    # leaves the old facts under the old URI rather than relabelling them.
    uri = binding.uri if base.revision == 0 else base.uri
    return Accepted(Outcome.FAILED if kind != "refused-output" else Outcome.REFUSED,
                    base._replace(uri=uri, generation=generation, last_failure=failure), message)


def accept(current: records.State | None, binding: Binding, generation: int, kind: str,
           facts: dict | None, message: str | None, now_ms: int) -> Accepted:
    """The next record for a result of ``kind`` (Published/Unchanged/Failed) from a runtime of
    ``generation``, accepted by the host at ``now_ms``."""
    if current is not None and generation < current.generation:
        return Accepted(Outcome.FENCED, None, f"generation {generation} is below the record's {current.generation}")
    if kind == FAILED:
        return failed(current, binding, generation, "provider-failed", message or "", now_ms)
    base = current if current is not None else _empty(binding, generation)
    if kind == UNCHANGED:
        if current is None or current.revision == 0 or current.generation != generation:
            return failed(current, binding, generation, "refused-output",
                          "Unchanged from a runtime that published nothing in this generation", now_ms)
        return _same(current, base._replace(uri=binding.uri, host_observed_at_ms=now_ms, last_failure=None), now_ms)
    if kind != PUBLISHED:
        return failed(current, binding, generation, "refused-output", f"unknown result {kind!r}", now_ms)
    try:
        checked = records.check_facts(facts)
    except records.FactsRefused as refusal:
        return failed(current, binding, generation, "refused-output", f"Published {refusal}", now_ms)
    digest = records.digest_facts(checked)
    if digest == base.host_digest:
        return _same(current, base._replace(uri=binding.uri, generation=generation, host_observed_at_ms=now_ms,
                                            last_failure=None), now_ms)
    return Accepted(Outcome.CHANGED, base._replace(uri=binding.uri, generation=generation, revision=base.revision + 1,
                                                   host_digest=digest, host_observed_at_ms=now_ms, facts=checked,
                                                   last_failure=None), None)
