"""Record advisories (docs/records.md §Doctor advisories).

Advisories are worth a human's attention and never a failure: context at or above
HARNESS_CONTEXT_WARN_PERCENT; context stale while the seat should be running; observed state
unknown while the seat should be running; a published driver-diagnostic failure; a harness
session a relaunch could not resume (``session-lost``, naming the lost id, while the seat's
current session is that fallback). Absence of a
record is silent here (nobody is watching is not ill health).
"""

from __future__ import annotations

from typing import Any

from st2.doctor.findings import Finding, Severity
from st2.records.harness_context import HARNESS_CONTEXT_WARN_PERCENT
from st2.roster.human import percent_text
from st2.roster.row import RosterRow


def _age(milliseconds: Any) -> str:
    if not isinstance(milliseconds, (int, float)):
        return "age unknown"
    seconds = int(milliseconds // 1000)
    if seconds < 120:
        return f"{seconds}s old"
    if seconds < 7200:
        return f"{seconds // 60}m old"
    return f"{seconds // 3600}h old"


def record_findings(row: RosterRow) -> list[Finding]:
    findings: list[Finding] = []
    running = row.desired_state == "running"
    context = row.context
    if context is not None:
        percent = context.get("usedPercent")
        if isinstance(percent, (int, float)) and percent >= HARNESS_CONTEXT_WARN_PERCENT:
            findings.append(Finding(Severity.ADVISORY, row.identity, "context-fill",
                                    f"context window {percent_text(percent)} full (reading {_age(context.get('ageMs'))})"))
        if context.get("stale") and running:
            findings.append(Finding(Severity.ADVISORY, row.identity, "context-stale",
                                    f"context reading is older than the horizon ({_age(context.get('ageMs'))}) while desired state is running"))
    observed = row.observed_state
    if observed is not None and running and observed.get("state") == "unknown":
        findings.append(Finding(Severity.ADVISORY, row.identity, "observed-state-unknown",
                                f"observed harness state is unknown ({observed.get('reason') or 'no reason'}) while desired state is running"))
    session = row.session
    if session is not None and session.get("start") == "fallback" and session.get("lostSessionIds"):
        lost = session["lostSessionIds"][-1]
        findings.append(Finding(Severity.ADVISORY, row.identity, "session-lost",
                                f"harness session {lost} could not be resumed; the seat started a fresh session "
                                "(the lost id is kept in its resumable-session record and never retried)"))
    diagnostic = row.driver_diagnostic
    if diagnostic.get("status") == "failure":
        findings.append(Finding(Severity.ADVISORY, row.identity, "driver-diagnostic",
                                f"{diagnostic.get('driver')} driver failed at stage {diagnostic.get('stage')}: {diagnostic.get('reason')} "
                                f"(source {diagnostic.get('source')}, evidence {_age(diagnostic.get('evidenceAgeMs'))}); recovery: {diagnostic.get('recovery')}"))
    return findings
