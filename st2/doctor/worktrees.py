"""Doctor's worktree findings for this host's seats (docs/worktrees.md).

- ``worktree-holds-work`` (advisory): a seat retired past ``archive-after`` whose worktree holds
  its work, so the supervisor's archive step skips it; the finding lists exactly what archiving
  and then removing the worktree would lose (:func:`st2.authoring.worktrees.holding_work`, real
  git, run only for such seats).
- ``worktree-held`` (advisory): a running seat the supervisor holds because its worktree could
  not be made or reused, with the reason from the worktree-state record it wrote.
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.declarations.model import RUNNING
from st2.doctor.findings import Finding, Severity


def worktree_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.authoring import archive, retired_ledger, worktrees
    from st2.declarations.catalog import load_catalog_declaration
    from st2.runtime.scope import RuntimeScope
    from st2.worktree import state

    location = CatalogLocation(Path(catalog_root), host)
    try:
        seats = archive.read_declarations(location)
    except archive.ArchiveRefused:
        return []  # a catalog that does not read is a failure of its own; nothing is archived meanwhile
    local = [(seat, declaration) for seat, declaration in seats
             if seat.host == host and declaration.worktree is not None]
    if not local:
        return []
    findings = []
    scope = RuntimeScope(location.root, host)
    for seat, declaration in local:
        if declaration.desired_state != RUNNING:
            continue
        reading = state.load(scope.directory, seat.runtime_id)
        if reading is not None and reading.state == "held":
            findings.append(Finding(Severity.ADVISORY, seat.runtime_id, "worktree-held",
                                    f"not launched: its worktree is held: {reading.reason}"))
    grace = load_catalog_declaration(location.root)[0].archive_after_seconds
    if grace is not None:
        observed = retired_ledger.load(location).get(host, {})
        due = retired_ledger.due(observed, int(grace * 1000), now_ms)
        for identity, message in sorted(worktrees.holding_work(local, host, due).items()):
            findings.append(Finding(Severity.ADVISORY, f"{host}.{identity}", "worktree-holds-work",
                                    f"retired past archive-after but not archived: {message}"))
    return findings
