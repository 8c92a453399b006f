"""Doctor's replication advisories (issue 21, seed 000 §Placement and transport): a catalog
``.stignore`` that disagrees with ``st2 catalog sync-rules --format syncthing``. No correctness
property depends on replication, so every finding here is an advisory, never a failure.
"""

from __future__ import annotations

from pathlib import Path

from st2.doctor.findings import Finding, Severity


def replication_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    from st2.catalog.sync_rules import stignore_disagreement

    findings = []
    disagreement = stignore_disagreement(Path(catalog_root))
    if disagreement is not None:
        findings.append(Finding(Severity.ADVISORY, "catalog", "sync-rules", disagreement))
    return findings
