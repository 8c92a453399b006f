"""The fault campaign of issue 15 at full size (the `faults` pytest tier runs the same parts at a
tenth: tests/faults/fault_*.py is the one implementation).

Parts (each prints its own RESULT line as it finishes):
1. supervisor replacement: 50 live PTY and exec tasks, 20 rounds of SIGKILL/SIGTERM of `st2 up`,
   idle and mid-pass, some replaced by a different build — `RESULT lost= duplicated= rounds=`;
2. mail under fire: 8 senders x 500 messages to 4 DING seats running the stand-in TUI while
   notifiers and the supervisor are SIGKILLed — `RESULT lost= double_paste= messages=`;
3. records under concurrency and kill: 4 writers x 2,000 writes, random SIGKILL —
   `RESULT torn= residue=`;
4. bad input: hypothesis over every reader, 10,000 cases each —
   `RESULT exceptions= fabricated= hangs= cases=`;
5. disk full, inodes exhausted, read-only (tmpfs; root) — `RESULT corrupted= tracebacks=`;
6. hostile catalog — `RESULT hangs= escapes= duplicates=`.

Usage: python benchmarks/faults.py [--scale 1.0] [--parts 1,2,3,4,5,6] [--seed N] [--smoke]
``--smoke`` imports every part and runs parts 3 and 4 at scale 0.001 (each part's floors apply),
in seconds; at their floors parts 1 and 6 still take 15-30 s and part 2 two minutes, part 5
(24 whole filesystems) does not scale, and the `faults` tier runs every part at a tenth.
Last line: RESULT <every key of every part that ran>, prefixed by its part where two parts share a
key name (hangs: bad input's and the hostile catalog's), then failed_checks_ratio=<fault counts
that are not zero / fault counts checked> (the target, every fault count zero, is 0.00). A part
skipped (part 5 without root) is said loudly and counts neither way.
"""

from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in (REPO / "tests" / "faults", REPO / "tests", REPO):
    sys.path.insert(0, str(folder))

SMOKE_PARTS, SMOKE_SCALE = "3,4", 0.001
SKIPPED = "skipped"
PARTS = {
    "1": "fault_supervisor",
    "2": "fault_mail",
    "3": "fault_records",
    "4": "fault_input",
    "5": "fault_disk",
    "6": "fault_catalog",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="1.0 = the issue's full size; the tier runs 0.1")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated part numbers")
    parser.add_argument("--seed", type=int, default=None, help="override every part's seed")
    parser.add_argument("--smoke", action="store_true",
                        help=f"import every part, run parts {SMOKE_PARTS} at scale {SMOKE_SCALE:g}")
    arguments = parser.parse_args()
    if arguments.smoke:
        for name in PARTS.values():
            importlib.import_module(name)
        arguments.parts, arguments.scale = SMOKE_PARTS, SMOKE_SCALE
    verdicts = []
    for number in arguments.parts.split(","):
        module = importlib.import_module(PARTS[number])
        base = Path(tempfile.mkdtemp(dir="/tmp", prefix=f"st2F{number}-"))
        began = time.monotonic()
        try:
            keywords = {} if arguments.seed is None else {"seed": arguments.seed}
            verdict = module.run(arguments.scale, base, **keywords)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        elapsed = time.monotonic() - began
        print(f"part {number} ({verdict.part}) scale={arguments.scale:g} seconds={elapsed:.0f} "
              + " ".join(f"{key}={value}" for key, value in verdict.notes.items()))
        for line in verdict.evidence[:20]:
            print(f"  {line}")
        print(verdict.line(), flush=True)
        if verdict.notes.get("skipped"):
            print(f"part {number} ({verdict.part}): {'; '.join(verdict.evidence)}", file=sys.stderr, flush=True)
        verdicts.append((PARTS[number].removeprefix("fault_"), verdict))
    names = [key for _, verdict in verdicts for key in verdict.figures]
    combined: dict[str, object] = {}
    for short, verdict in verdicts:
        for key, value in verdict.figures.items():
            combined[key if names.count(key) == 1 else f"{short}_{key}"] = value
    checked = [value for key, value in combined.items()
               if key.rsplit("_", 1)[-1] not in ("rounds", "messages", "cases") and value != SKIPPED]
    failed = sum(value != 0 for value in checked)
    ratio = failed / len(checked) if checked else 0.0
    print("RESULT " + " ".join(f"{key}={value}" for key, value in combined.items())
          + f" failed_checks_ratio={ratio:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
