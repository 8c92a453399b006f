"""Doctor's schedule lines for this host's seats: ``schedule`` (advisory, never a failure) names
each declared schedule of a running seat with its next run, read from the state ``st2 up`` keeps
(:mod:`st2.schedule.state`); a declaration that does not load is reported by the declaration
check, not here."""

from __future__ import annotations

from pathlib import Path

from st2.declarations.model import RUNNING
from st2.doctor.findings import Finding, Severity


def schedule_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.catalog.discovery import discover
    from st2.declarations import load_agent
    from st2.runtime.resumable_session import SessionStore
    from st2.schedule import state

    findings = []
    store = None
    for seat in discover(Path(catalog_root)).seats:
        if seat.host != host:
            continue
        declaration, _ = load_agent(seat.declaration_path)
        if declaration is None or not declaration.schedules or declaration.desired_state != RUNNING:
            continue
        store = store or SessionStore.of(Path(catalog_root), host)
        runtime_id = f"{host}.{seat.identity}"
        recorded = state.read(store, runtime_id) or {}
        for schedule in declaration.schedules:
            findings.append(Finding(Severity.ADVISORY, runtime_id, "schedule",
                                    state.next_run_text(schedule, recorded.get(schedule.name))))
    return findings
