"""Run every Doctor check over one catalog."""

from __future__ import annotations

from pathlib import Path

from st2.doctor.event_journal import journal_findings
from st2.doctor.findings import Finding, Severity, exit_status
from st2.doctor.filesystem import filesystem_findings
from st2.doctor.health import supervisor_health, task_health
from st2.doctor.records import record_findings
from st2.doctor.replication import replication_findings
from st2.doctor.schedules import schedule_findings
from st2.doctor.wakeups import wake_findings
from st2.doctor.worktrees import worktree_findings
from st2.roster.build import build_roster
from st2.roster.row import session_record
from st2.runtime.resumable_session import SessionStore

# The host-scoped checks after the per-seat record checks, each (catalog_root, host, now_ms)
# -> list[Finding].
HOST_CHECKS = (supervisor_health, task_health, filesystem_findings, replication_findings, wake_findings,
               journal_findings, worktree_findings, schedule_findings)


def mailbox_findings(catalog_root: Path, host: str | None = None) -> list[Finding]:
    """A seat's or principal's mailbox directory that is a symlink or not a directory: a failure
    on this host (``host``), an advisory on another's (mail to it is refused here all the same)."""
    from st2.catalog.discovery import discover
    from st2.catalog.mailboxes import unsafe_mailbox

    found = discover(catalog_root)
    findings = []
    for owner in list(found.seats) + list(found.principals):
        unsafe = unsafe_mailbox(owner.directory)
        if unsafe is not None:
            name = f"{owner.host}.{Path(owner.directory).name}"
            severity = Severity.FAILURE if host is None or owner.host == host else Severity.ADVISORY
            findings.append(Finding(severity, name, "mailbox-unsafe",
                                    f"{unsafe[0]} is {unsafe[1]}; mail is refused until it is a real directory"))
    return findings


def catalog_declaration_findings(catalog_root: Path) -> list[Finding]:
    """Each problem ``st2 validate`` finds in ``catalog.kdl``, located: an error is a failure (the
    whole file then falls back to the default declaration, so every notify hook is off and
    archival and the pty root take their defaults), a warning an advisory."""
    from st2.declarations.catalog import load_catalog_declaration

    _, diagnostics = load_catalog_declaration(catalog_root)
    return [Finding(Severity.FAILURE if diagnostic.is_error else Severity.ADVISORY, "catalog",
                    "catalog-declaration", str(diagnostic)) for diagnostic in diagnostics]


def run_doctor(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    findings: list[Finding] = []
    if not catalog_root.is_dir():
        return [Finding(Severity.FAILURE, "catalog", "catalog-missing", f"{catalog_root} is not a directory")]
    rows, problems = build_roster(catalog_root, now_ms, host=host)
    for problem in problems:
        if problem.host in (None, host):
            findings.append(Finding(Severity.FAILURE, "catalog", "declaration", problem))
        else:  # another host's to fix: replication delivered it here, nothing local depends on it
            findings.append(Finding(Severity.ADVISORY, "catalog", "remote-declaration", problem))
    findings.extend(catalog_declaration_findings(catalog_root))
    store = SessionStore.of(catalog_root, host)
    for row in rows:
        if row.host == host:  # this host's resumable-session record (the session-lost advisory)
            row.session = session_record(store, row.identity)
        findings.extend(record_findings(row, now_ms))
    findings.extend(mailbox_findings(catalog_root, host))
    for check in HOST_CHECKS:
        findings.extend(check(catalog_root, host, now_ms))
    return findings


def report(catalog_root: Path, host: str, now_ms: int, echo) -> int:
    """``st2 doctor``: print each finding's line (or one ``ok:`` line when there is none) through
    ``echo`` and return the verb's exit status: 1 on any failure, advisories never."""
    findings = run_doctor(catalog_root, host, now_ms)
    for finding in findings:
        echo(finding.line())
    if not findings:
        echo(f"ok: {catalog_root}: no findings")
    return exit_status(findings)
