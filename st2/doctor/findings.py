"""A Doctor finding: an advisory never changes the exit status; a failure does."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.Enum):
    ADVISORY = "advisory"
    FAILURE = "failure"


@dataclass(frozen=True)
class Finding:
    severity: Severity
    subject: str  # the seat's <host>.<identity>, or "catalog" / "supervisor"
    check: str  # a stable check name, e.g. "context-fill"
    message: str

    def line(self) -> str:
        """One line per finding: a diagnostic's help and any control character are folded in."""
        from st2.declarations.diagnostics import one_line

        return one_line(f"{self.severity.value}: {self.subject}: {self.check}: {self.message}")


def exit_status(findings: list[Finding]) -> int:
    return 1 if any(finding.severity is Severity.FAILURE for finding in findings) else 0
