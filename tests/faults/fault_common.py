"""What every part of the fault campaign shares: its size, its verdict, bounded waiting.

Each part is one function ``run(scale, base, seed) -> Verdict``. The ``faults`` pytest tier
calls it at :data:`TIER_SCALE` with the part's own seed (or ``$ST2_SIGKILL_SEED``, to replay a
failure's random fault points), names that seed in every failure, and asserts every fault count
is zero; ``benchmarks/faults.py`` calls the same function at scale 1 (the issue's full size) and
prints the same RESULT line.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from support import poll_for  # noqa: F401  (every wait of the campaign is bounded by it)

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
    reproduce: str = ""     # how to replay this run's random fault points, when known

    def line(self) -> str:
        return "RESULT " + " ".join(f"{key}={value}" for key, value in self.figures.items())

    def explain(self) -> str:
        return "\n".join([self.line(), *([self.reproduce] if self.reproduce else []), *self.evidence[:40]])


def run_at_tier(part, prefix: str) -> Verdict:
    """Run a campaign part at :data:`TIER_SCALE` in a fresh short temp directory (removed after)
    and print its RESULT line, as the tier's tests do. The seed is the part's default unless
    ``$ST2_SIGKILL_SEED`` sets it; it is printed, noted on anything the run raises, and carried in
    the verdict's notes and explanation."""
    import inspect

    from support import FaultSeed

    seed = FaultSeed(default=inspect.signature(part.run).parameters["seed"].default)
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix=prefix))
    try:
        with seed.reported():
            verdict = part.run(TIER_SCALE, base, seed=seed.seed)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    verdict.notes["seed"] = seed.seed
    verdict.reproduce = seed.line()
    print(verdict.line(), verdict.notes)
    return verdict
