"""st2's gate library: the gate output contract every st2 gate speaks (docs/kit.md §Gate output contract).

A gate prints ``<gate>: clean (<what was covered>)`` and exits 0, or one finding per line
(``<gate>: <finding>``) followed by ``help:`` lines and exits 1; a gate that cannot take a
reading (misuse, an unreadable input) prints ``<gate>: <why>`` on stderr and exits 2.

This module is the library check-gate-tamper counts among the gate files (its analogue of
gate-sdk's ``lib/gate.sh``): a commit editing it is a gate edit. Standard library only.
"""

from __future__ import annotations

import sys

CLEAN = 0
FINDINGS = 1
UNREADABLE = 2


class GateRefusal(Exception):
    """The gate cannot take a reading (exit 2); the message is one line."""


def report(gate: str, findings: list[str], help_lines: list[str], clean_detail: str, out=None) -> int:
    """Print the clean line or the findings and their help; return the gate's exit status."""
    out = sys.stdout if out is None else out
    if not findings:
        out.write(f"{gate}: clean ({clean_detail})\n")
        return CLEAN
    for finding in findings:
        out.write(f"{gate}: {finding}\n")
    for line in help_lines:
        out.write(f"help: {line}\n")
    return FINDINGS


def refuse(gate: str, message: str, err=None) -> int:
    err = sys.stderr if err is None else err
    err.write(f"{gate}: {message}\n")
    return UNREADABLE
