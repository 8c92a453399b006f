"""Doctor's replication advisories (docs/records.md §Placement and replicated paths): a catalog
``.stignore`` that disagrees with ``st2 catalog sync-rules --format syncthing``, and every
conflict copy a replication engine left (readers ignore it; validate refuses one of a
declaration). No correctness property depends on replication, so every finding here is an
advisory, never a failure.
"""

from __future__ import annotations

from pathlib import Path

from st2.doctor.findings import Finding, Severity


def replication_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.catalog.conflicts import conflict_copies
    from st2.catalog.sync_rules import stignore_disagreement

    findings = []
    disagreement = stignore_disagreement(Path(catalog_root))
    if disagreement is not None:
        findings.append(Finding(Severity.ADVISORY, "catalog", "sync-rules", disagreement))
    for copy in conflict_copies(Path(catalog_root)):
        of = f"of {copy.original}" if copy.original else "of a file"
        then = ("validate refuses the catalog until it is merged into the declaration and deleted"
                if copy.declaration else "readers ignore it; delete it once its content is reconciled")
        findings.append(Finding(Severity.ADVISORY, "catalog", "conflict-copy",
                                f"{copy.relative} is a replication engine's conflict copy {of}; {then}"))
    return findings
