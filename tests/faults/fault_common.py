"""What every part of the fault campaign shares: its size, its verdict, bounded waiting.

Each part is one function ``run(scale, base, seed) -> Verdict``. The ``faults`` pytest tier
calls it at :data:`TIER_SCALE` and asserts every fault count is zero; ``benchmarks/faults.py``
calls the same function at scale 1 (the issue's full size) and prints the same RESULT line.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

TIER_SCALE = 0.1


def scaled(full: int, scale: float, floor: int = 1) -> int:
    """``full`` at ``scale``, never below ``floor`` (so a tenth still exercises every fault kind)."""
    return max(floor, round(full * scale))


@dataclass
class Verdict:
    """One part's figures, in the order its RESULT line names them, and the evidence behind
    every non-zero fault count (what a failing assertion prints)."""

    part: str
    figures: dict[str, int | float | str]
    evidence: list[str] = field(default_factory=list)
    notes: dict[str, object] = field(default_factory=dict)

    def line(self) -> str:
        return "RESULT " + " ".join(f"{key}={value}" for key, value in self.figures.items())

    def explain(self) -> str:
        return "\n".join([self.line(), *self.evidence[:40]])


def poll_for(predicate, timeout: float, step: float = 0.02):
    """The first truthy value of ``predicate()`` within ``timeout`` seconds, else the last
    (falsy) one. Every wait of the campaign is bounded by observable progress through this."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(step)
