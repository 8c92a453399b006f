"""Doctor names a fleet event journal the supervisor cannot use (:mod:`st2.events.journal`).

- ``journal`` or ``journal.1`` present but not a regular file (a FIFO, a symlink, a directory,
  a socket): a failure naming the path. ``st2 up``'s writer refuses it, so nothing is journaled
  and no notify hook runs until it is removed; ``st2 events`` and ``st2 top`` do not read it.
- ``state.json`` present but not one the writer wrote (not a regular file, not a
  ``st2.fleet-event-state.v1`` object, a ``seq`` out of range): an advisory naming the path and
  why. The writer never continues from it: its next start takes the current records as a new
  baseline after the journal's last line.

A pure observation (``lstat`` and the journal's own bounded reader): Doctor changes nothing and
never opens a FIFO.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from st2.doctor.findings import Finding, Severity
from st2.events import journal
from st2.fs.read import kind_of
from st2.runtime.scope import RuntimeScope

CHECK = "event-journal"
SUBJECT = "supervisor"


def journal_findings(catalog_root: Path, host: str, now_ms: int, scope: RuntimeScope | None = None) -> list[Finding]:
    scope = scope or RuntimeScope(Path(catalog_root), host)
    directory = journal.directory_of(scope)
    findings = []
    for name in (journal.CURRENT, journal.PREVIOUS):
        path = directory / name
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            findings.append(Finding(Severity.FAILURE, SUBJECT, CHECK,
                                    f"the event journal {path} is {kind_of(mode)}, not a regular file; st2 up journals "
                                    "no event and runs no notify hook until it is removed"))
    try:
        journal.load_state(directory)
    except journal.StateMalformed as error:
        findings.append(Finding(Severity.ADVISORY, SUBJECT, CHECK,
                                f"{error}; st2 up never continues from it (its next start takes the current records "
                                "as a new baseline)"))
    return findings
