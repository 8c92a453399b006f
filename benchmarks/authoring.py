"""Authoring cost on a 627-seat catalog (the roster's budget size), on the machine's real disk.

1. `st2 agent publish --expect-absent` of one new seat through the real CLI (median wall ms of
   10), against `st2 validate` of the same catalog as the anchor (interleaved, so load weighs on
   both alike): publication pays one full-catalog validation, so the ratio should stay near 1.
2. The supervisor's archive step in-process, as each pass runs it: with no retired seat (median
   µs), and with one retired seat already recorded and not yet due (the pass's own hint and a
   ledger read let it skip the lock and a second catalog read; median µs).
``--smoke`` runs the same path over a 20-seat catalog, 2 publications and 20 archive steps each.
Last line: RESULT publish_median_ms=<x> ratio_validate=<y> archive_step_idle_us=<z> archive_step_not_due_us=<w>
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

SEATS = 627
RUNS = 10
STEPS = 200
SMOKE_SEATS, SMOKE_RUNS, SMOKE_STEPS = 20, 2, 20


def catalog_in(directory: Path, seats: int) -> Path:
    root = directory / "catalog"
    for index in range(seats):
        seat = root / "agents" / "h" / f"seat-{index:04d}"
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "seat-{index:04d}" {{\n    name "Seat {index}"\n    argv "sh"\n    ding\n}}\n')
    return root


def wall_ms(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_SEATS} seats")
    smoke = parser.parse_args().smoke
    seats, runs, steps = (SMOKE_SEATS, SMOKE_RUNS, SMOKE_STEPS) if smoke else (SEATS, RUNS, STEPS)
    from st2.authoring.auto_archive import archive_step
    from st2.catalog.location import CatalogLocation

    with tempfile.TemporaryDirectory() as directory:
        root = catalog_in(Path(directory), seats)
        st2 = [sys.executable, "-m", "st2"]
        publish, validate = [], []
        for index in range(runs):
            spec = Path(directory) / f"new-{index}.kdl"
            spec.write_text(f'agent "new-{index}" {{\n    host "h"\n    argv "sh"\n}}\n')
            digest = hashlib.sha256(spec.read_bytes()).hexdigest()
            publish.append(wall_ms([*st2, "agent", "publish", "--catalog", str(root), "--spec", str(spec),
                                    "--input-sha256", digest, "--expect-absent"]))
            validate.append(wall_ms([*st2, "validate", "--catalog", str(root), "--host", "h"]))
        location = CatalogLocation(root, "h")
        idle = []
        for _ in range(steps):
            started = time.perf_counter()
            archive_step(location, 0, lambda: [], retired_hint=set())
            idle.append((time.perf_counter() - started) * 1_000_000)
        retired = root / "agents" / "h" / "seat-0000" / "agent.kdl"
        retired.write_text('agent "seat-0000" {\n    desired-state "retired" reason="done"\n    argv "sh"\n}\n')
        archive_step(location, 1_788_000_000_000, lambda: [], retired_hint={"seat-0000"})   # records it
        due_check = []
        for _ in range(steps):
            started = time.perf_counter()
            archive_step(location, 1_788_000_000_000, lambda: [], retired_hint={"seat-0000"})
            due_check.append((time.perf_counter() - started) * 1_000_000)
    publish_ms, validate_ms = statistics.median(publish), statistics.median(validate)
    print(f"publish one seat into {seats}: median {publish_ms:.0f} ms; validate: median {validate_ms:.0f} ms")
    print(f"archive step, nothing retired: median {statistics.median(idle):.0f} µs; "
          f"one retired, not due: median {statistics.median(due_check):.0f} µs")
    print(f"RESULT publish_median_ms={publish_ms:.0f} ratio_validate={publish_ms / validate_ms:.2f} "
          f"archive_step_idle_us={statistics.median(idle):.0f} "
          f"archive_step_not_due_us={statistics.median(due_check):.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
