"""Doctor names the machine faults every writer of st2 hits: the filesystem holding the catalog
(records, mail, declarations) or the host-local runtime state (launch records, DING ownership) is
full, out of inodes, or mounted read-only.

A pure observation (``statvfs``), never a test write: Doctor changes nothing. A filesystem that
reports no inode table (``f_files == 0``, as btrfs does) is never called out of inodes.
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.catalog.layout import runtime_state_dir
from st2.doctor.findings import Finding, Severity

CHECK = "filesystem"
# Less than this is full for st2's purposes: one record write plus its staging copy needs it.
LOW_SPACE_BYTES = 64 * 1024


def faults_of(path: Path) -> list[str]:
    """What keeps a writer from publishing under ``path`` (its nearest existing ancestor is
    examined), as short phrases; empty when nothing does."""
    path = Path(os.path.abspath(path))
    while not path.exists() and path.parent != path:
        path = path.parent
    try:
        status = os.statvfs(path)
    except OSError as error:
        return [f"cannot be examined ({error.strerror or error})"]
    faults = []
    if status.f_flag & os.ST_RDONLY:
        faults.append("is mounted read-only")
    if status.f_bavail * status.f_frsize < LOW_SPACE_BYTES:
        faults.append(f"has no space left ({status.f_bavail * status.f_frsize} bytes free)")
    if status.f_files > 0 and status.f_favail == 0:
        faults.append("has no free inodes")
    return faults


def filesystem_findings(catalog_root: Path, host: str, now_ms: int) -> list[Finding]:
    """One failure per faulty place: the catalog and the runtime state directory."""
    findings = []
    places = [("catalog", Path(catalog_root)), ("runtime state", runtime_state_dir())]
    for label, path in places:
        for fault in faults_of(path):
            findings.append(Finding(Severity.FAILURE, "catalog" if label == "catalog" else "supervisor", CHECK,
                                    f"the {label} filesystem at {path} {fault}; writers there fail"))
    return findings
