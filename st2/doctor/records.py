"""Record advisories (docs/records.md §Doctor advisories).

Advisories are worth a human's attention and never a failure: context at or above
HARNESS_CONTEXT_WARN_PERCENT; context stale while the seat should be running; observed state
unknown while the seat should be running; a published driver-diagnostic failure (its ``context``
stage, an unmeasured build launched through ``admit-unmeasured``, as ``context-withheld``); a harness
session a relaunch could not resume (``session-lost``, naming the lost id, while the seat's
current session is that fallback); a seat whose delivery is held (``delivery-hold``: a fresh dnd,
the one hold DING and both native pumps honour, :mod:`st2.delivery.hold`; or the seat's account
budget under ``hold-on-pause``, named with its account, window and reset);
a resource binding whose last observation failed
(``resource-failing``) or that was not observed within the horizon (``resource-stale``) while
the seat should be running. Absence of a
record is silent here (nobody is watching is not ill health).
"""

from __future__ import annotations

from st2.doctor.findings import Finding, Severity
from st2.roster.human import percent_text
from st2.roster.row import RosterRow, lost_session


def _age(milliseconds: int | None) -> str:
    if milliseconds is None:
        return "age unknown"
    seconds = int(milliseconds // 1000)
    if seconds < 120:
        return f"{seconds}s old"
    if seconds < 7200:
        return f"{seconds // 60}m old"
    return f"{seconds // 3600}h old"


def utc_minute(stamp_ms: int) -> str:
    """A wall-ms stamp as ``2027-01-15T08:30Z`` (UTC, to the minute): when a budget hold lifts."""
    from datetime import datetime, timezone

    try:
        return datetime.fromtimestamp(stamp_ms // 1000, tz=timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    except (OverflowError, OSError, ValueError):
        return f"{stamp_ms}ms"


def record_findings(row: RosterRow, now_ms: int | None = None) -> list[Finding]:
    """The row's advisories, each decided by its record kind's own rule: the reading's
    :attr:`~st2.records.harness_context.Reading.fill_advised` and ``stale``, the observation's
    ``is_unknown``, :func:`st2.roster.row.lost_session`, the diagnostic's ``failed`` and
    :func:`st2.resources.state.stale` (judged at ``now_ms``; without it no binding is stale)."""
    findings: list[Finding] = []
    running = row.desired_state == "running"
    context = row.context
    if context is not None:
        if context.fill_advised:
            findings.append(Finding(Severity.ADVISORY, row.identity, "context-fill",
                                    f"context window {percent_text(context.used_percent)} full (reading {_age(context.age_ms)})"))
        if context.stale and running:
            findings.append(Finding(Severity.ADVISORY, row.identity, "context-stale",
                                    f"context reading is older than the horizon ({_age(context.age_ms)}) while desired state is running"))
    observed = row.observed_state
    if observed is not None and running and observed.is_unknown:
        findings.append(Finding(Severity.ADVISORY, row.identity, "observed-state-unknown",
                                f"observed harness state is unknown ({observed.reason or 'no reason'}) while desired state is running"))
    lost = lost_session(row.session)
    if lost is not None:
        findings.append(Finding(Severity.ADVISORY, row.identity, "session-lost",
                                f"harness session {lost} could not be resumed; the seat started a fresh session "
                                "(the lost id is kept in its resumable-session record and never retried)"))
    if row.delivery_hold == "budget" and row.budget_hold is not None:
        hold = row.budget_hold
        findings.append(Finding(Severity.ADVISORY, row.identity, "delivery-hold",
                                f"delivery held: budget of account {hold.account} ({hold.axis} window at "
                                f"{hold.used_pct}%, hold-on-pause); new mail waits unread and unowned until the "
                                f"window resets at {utc_minute(hold.until_ms)} or the verdict changes"))
    elif row.delivery_hold is not None:
        findings.append(Finding(Severity.ADVISORY, row.identity, "delivery-hold",
                                f"delivery held: fresh {row.delivery_hold} declared; new mail waits unread and unowned "
                                "until the seat leaves it or it ages out"))
    diagnostic = row.driver_diagnostic
    if diagnostic.failed and diagnostic.stage == "context":
        findings.append(Finding(Severity.ADVISORY, row.identity, "context-withheld",
                                f"no context reading is published: {diagnostic.driver} {diagnostic.producer_version} "
                                "is not a measured build (launched through catalog.kdl admit-unmeasured); "
                                "run a measured build, or measure this one and admit it in the driver's gate"))
    elif diagnostic.failed:
        findings.append(Finding(Severity.ADVISORY, row.identity, "driver-diagnostic",
                                f"{diagnostic.driver} driver failed at stage {diagnostic.stage}: {diagnostic.reason} "
                                f"(source {diagnostic.source}, evidence {_age(diagnostic.evidence_age_ms)}); recovery: {diagnostic.recovery}"))
    if running:
        findings += _resource_findings(row, now_ms)
    return findings


def _resource_findings(row: RosterRow, now_ms: int | None) -> list[Finding]:
    from st2.resources.state import stale

    findings = []
    for state in row.resource_states:
        failure = state.last_failure
        if failure is not None:
            findings.append(Finding(Severity.ADVISORY, row.identity, "resource-failing",
                                    f"resource {state.binding!r} ({state.uri}) failed its last observation: "
                                    f"{failure.kind}: {failure.message}"))
        elif now_ms is not None and stale(state, now_ms):
            age = None if state.host_observed_at_ms is None else now_ms - state.host_observed_at_ms
            findings.append(Finding(Severity.ADVISORY, row.identity, "resource-stale",
                                    f"resource {state.binding!r} ({state.uri}) was last observed {_age(age)}, "
                                    "past the staleness horizon"))
    return findings
