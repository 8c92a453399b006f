"""The values whose changes are fleet events, read off the roster's own projection.

A *facet* is one ``(kind, seat, subject)`` key and the projected value its events are about:

================  ======================================  ==========================================
kind              value (``from`` / ``to`` on the wire)   an event fires when
================  ======================================  ==========================================
``blocked``       observedState.blockedOn (null: none)    the value becomes or stops being ``human``
``parked``        ``parked`` / ``crash-loop`` / null      the value changes (subject: the task)
``context``       context.usedPercent (null: withheld)    it crosses HARNESS_CONTEXT_WARN_PERCENT
``compaction``    context.compactions                     the count grows (a new session's reset
                                                          to a lower count is no compaction)
``pause``         the usage verdict word                  it becomes or stops being ``PAUSE``
``usage-stale``   the usage verdict word                  it becomes or stops being ``STALE``
``diagnostic``    driverDiagnostic.status                 the status word changes (appears/clears)
``stale``         ``stale`` / ``fresh`` / null            it becomes or stops being ``stale``
                                                          (subject: harness-state/harness-context)
``resource``      the binding's revision, or its last     the value changes (subject: the binding;
                  failure's kind while it fails           a new revision, a failure, a recovery)
``hold``          ``budget`` / null (a seat declaring an  the budget hold starts or lifts (evidence:
                  account: roster ``budgetHold``)         account, axis, until)
================  ======================================  ==========================================

Only those classes are compared, never stamps, so a heartbeat (a record re-written with a new
``writtenAtMs`` and the same reading) or an unchanged restatement is no event, and a record that
went stale is one event however many passes see it stale. Every value comes from the readers the
roster uses — :func:`seat_facets` takes a :class:`st2.roster.row.RosterRow` — never from a
second reading of the records.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from st2.events import event as ev
from st2.records.harness_context import HARNESS_CONTEXT_WARN_PERCENT, fill_advised
from st2.records.harness_state import blocked_on_human

STALE_WORD = "stale"
FRESH_WORD = "fresh"
CRASH_LOOP = "crash-loop"
HARNESS_STATE_SUBJECT = "harness-state"
HARNESS_CONTEXT_SUBJECT = "harness-context"
USAGE_GROUP = "#usage"
PARKS_GROUP = "#parks"
SEAT_GROUP_PREFIX = "seat:"


class Facet(NamedTuple):
    value: Any
    evidence: dict[str, Any]
    stamp: int | None  # the record's own time for this value, when it states one


def key(kind: str, seat: str | None, subject: str = "") -> str:
    return f"{kind}|{seat or ''}|{subject}"


def split_key(text: str) -> tuple[str, str | None, str]:
    kind, seat, subject = text.split("|", 2)
    return kind, seat or None, subject


def seat_group(seat: str) -> str:
    return SEAT_GROUP_PREFIX + seat


def group_of(kind: str, seat: str | None) -> str:
    """Which projection group owns a key: the seat's records, the park markers or the usage verdict."""
    if kind == ev.PARKED:
        return PARKS_GROUP
    if kind in (ev.PAUSE, ev.USAGE_STALE):
        return USAGE_GROUP
    return seat_group(seat or "")


def seat_facets(row) -> dict[str, Facet]:
    """Every seat-level facet of one roster row (all keys present, null values where the
    record says nothing). The evidence objects are journal wire: their names are the records'."""
    seat = row.identity
    observed = row.observed_state
    context = row.context
    diagnostic = row.driver_diagnostic
    facets: dict[str, Facet] = {}
    if observed is None:
        facets[key(ev.BLOCKED, seat)] = Facet(None, {"state": None, "ask": None, "since": None}, None)
        state_word = None
    else:
        facets[key(ev.BLOCKED, seat)] = Facet(
            observed.blocked_on, {"state": observed.state, "ask": observed.ask, "since": observed.since_ms},
            observed.since_ms)
        state_word = STALE_WORD if observed.is_stale else FRESH_WORD
    if context is None:
        facets[key(ev.CONTEXT, seat)] = Facet(
            None, {"warnPercent": HARNESS_CONTEXT_WARN_PERCENT, "recordObservedAtMs": None}, None)
        facets[key(ev.COMPACTION, seat)] = Facet(
            None, {"lastCompactionMs": None, "lastCompactionTrigger": None}, None)
        context_word = None
    else:
        facets[key(ev.CONTEXT, seat)] = Facet(
            context.used_percent, {"warnPercent": HARNESS_CONTEXT_WARN_PERCENT,
                                   "recordObservedAtMs": context.observed_at_ms},
            context.observed_at_ms)
        facets[key(ev.COMPACTION, seat)] = Facet(
            context.compactions, {"lastCompactionMs": context.last_compaction_ms,
                                  "lastCompactionTrigger": context.last_compaction_trigger},
            context.last_compaction_ms)
        context_word = STALE_WORD if context.stale else FRESH_WORD
    facets[key(ev.DIAGNOSTIC, seat)] = Facet(
        diagnostic.status,
        {"driver": diagnostic.driver, "stage": diagnostic.stage, "reason": diagnostic.reason,
         "source": diagnostic.source},
        diagnostic.observed_at)
    facets[key(ev.STALE, seat, HARNESS_STATE_SUBJECT)] = Facet(state_word, {"record": HARNESS_STATE_SUBJECT}, None)
    facets[key(ev.STALE, seat, HARNESS_CONTEXT_SUBJECT)] = Facet(
        context_word, {"record": HARNESS_CONTEXT_SUBJECT}, None)
    account = getattr(row, "account", None)
    if account is not None:   # a seat on no account has no hold facet (nothing to hold it)
        hold = row.budget_hold
        facets[key(ev.HOLD, seat)] = Facet(
            None if hold is None else hold.to_wire()["reason"],
            {"account": account if hold is None else hold.account, "axis": None if hold is None else hold.axis,
             "until": None if hold is None else hold.until_ms}, None)
    for state in row.resource_states:
        failure = state.last_failure
        facets[key(ev.RESOURCE, seat, state.binding)] = Facet(
            state.revision if failure is None else failure.kind,
            {"binding": state.binding, "uri": state.uri, "revision": state.revision, "generation": state.generation,
             "hostDigest": state.host_digest, "failure": None if failure is None else failure.message},
            state.host_observed_at_ms if failure is None else failure.at_ms)
    return facets


def stale_deadline_ms(row) -> int | None:
    """When, with no record written, a fresh record of this row's seat goes stale by age alone
    (the earliest of its harness-state and harness-context horizons), or None: the time at
    which re-reading the seat can show a ``stale`` transition no write announces."""
    deadlines = [reading.stale_at_ms() for reading in (row.observed_state, row.context) if reading is not None]
    deadlines = [deadline for deadline in deadlines if deadline is not None]
    return min(deadlines) if deadlines else None


def park_word(reason: str) -> str:
    """``crash-loop`` for a task the supervisor parked for exiting past its restart policy (its
    reason is the exit, ``exited …``), else ``parked``."""
    return CRASH_LOOP if reason.startswith("exited ") else ev.PARKED


def park_facet(seat: str, task: str, reason: str, parked_at_ms: int, attempts: int) -> tuple[str, Facet]:
    return key(ev.PARKED, seat, task), Facet(
        park_word(reason), {"task": task, "reason": reason, "parkedAtMs": parked_at_ms, "attempts": attempts},
        parked_at_ms)


def usage_facets(word: str, line: str, account: str | None = None) -> dict[str, Facet]:
    """The host's verdict (``account`` None), or a declared account's: its keys' subject and its
    evidence's ``account`` name it."""
    evidence = {"verdict": line} if account is None else {"account": account, "verdict": line}
    subject = account or ""
    return {key(ev.PAUSE, None, subject): Facet(word, evidence, None),
            key(ev.USAGE_STALE, None, subject): Facet(word, evidence, None)}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def changed(kind: str, old: Any, new: Any) -> bool:
    """Whether ``old -> new`` is a transition of ``kind`` (the table in the module docstring)."""
    if kind == ev.BLOCKED:
        return blocked_on_human(old) != blocked_on_human(new)
    if kind == ev.CONTEXT:
        return fill_advised(old) != fill_advised(new)
    if kind == ev.COMPACTION:
        return _is_number(old) and _is_number(new) and new > old
    if kind == ev.PAUSE:
        return (old == "PAUSE") != (new == "PAUSE")
    if kind == ev.USAGE_STALE:
        return (old == "STALE") != (new == "STALE")
    if kind == ev.STALE:
        return (old == STALE_WORD) != (new == STALE_WORD)
    if kind == ev.DIAGNOSTIC:
        return old is not None and new is not None and old != new
    return old != new  # parked


def raised(kind: str, value: Any) -> bool:
    """Whether ``value`` is the alarming side of ``kind`` (what a proof from the current records
    alone reports)."""
    if kind == ev.DIAGNOSTIC:
        return value is not None and value != "absent"
    if kind == ev.COMPACTION:
        return _is_number(value) and value > 0
    if kind == ev.RESOURCE:
        return isinstance(value, str)  # failing: its failure's kind
    return changed(kind, None, value)


def absent_evidence(kind: str, subject: str) -> dict[str, Any]:
    """The evidence of a key whose source went away (a cleared park marker, a removed record)."""
    if kind == ev.PARKED:
        return {"task": subject, "reason": None, "parkedAtMs": None, "attempts": None}
    if kind == ev.STALE:
        return {"record": subject}
    if kind == ev.RESOURCE:
        return {"binding": subject}
    if kind == ev.HOLD:
        return {"account": None, "axis": None, "until": None}
    return {}


def diff(previous: dict[str, Any], current: dict[str, Facet], now_ms: int) -> list[ev.FleetEvent]:
    """The transitions from ``previous`` (key -> value) to ``current`` (key -> facet), in key
    order; at most one per key, so one record write is at most one event per kind. A key only
    in ``previous`` reads as null now; a key only in ``current`` was null before."""
    events = []
    for name in sorted(set(previous) | set(current)):
        kind, seat, subject = split_key(name)
        old = previous.get(name)
        facet = current.get(name)
        new = facet.value if facet is not None else None
        if not changed(kind, old, new):
            continue
        evidence = facet.evidence if facet is not None else absent_evidence(kind, subject)
        events.append(ev.FleetEvent(kind, seat, old, new, now_ms, evidence))
    return events


def proved(current: dict[str, Facet], now_ms: int) -> list[ev.FleetEvent]:
    """What the current records alone prove, with no journal: each raised facet as a
    transition from null to its value at the record's own stamp (``now_ms`` where the record
    states none). Nothing else is claimed: no earlier value, no cleared condition."""
    events = []
    for name in sorted(current):
        kind, seat, _ = split_key(name)
        facet = current[name]
        if raised(kind, facet.value):
            events.append(ev.FleetEvent(kind, seat, None, facet.value,
                                        facet.stamp if isinstance(facet.stamp, int) else now_ms, facet.evidence))
    events.sort(key=lambda item: (item.observed_at_ms, item.kind, item.seat or ""))
    return events
