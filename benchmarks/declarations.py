"""Declaration loading cost: discovery plus `load_agent` over a 627-seat catalog, in process.

Each seat carries a realistic declaration (presentation, desired state with reason, restart,
argv, ding, a resource, an exec task, a render block). Prints the median over 15 rounds of the
discovery walk and of loading every declaration, the per-declaration cost, and the one-time
import cost of `st2.declarations` + `st2.catalog.discovery` measured in a fresh interpreter
(median of 7), so the roster's 250 ms budget can be apportioned: ``budget_ratio`` is the share of
it that discovery, loading and the import take together (the anchor). Rounds interleave nothing
else; run on an idle machine for stable numbers. ``--smoke`` runs the same path over 30 seats, 2
rounds and 2 imports (the keys keep their 627 names; ``seats=`` says how many were loaded).
Last line: RESULT load_per_declaration_us=<x> load_627_ms=<y> load_627_cpu_ms=<c> discover_627_ms=<z>
import_ms=<w> budget_ratio=<(z + y + w) / 250> seats=<n>
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEATS = 627
ROUNDS = 15
IMPORTS = 7
SMOKE_SEATS, SMOKE_ROUNDS, SMOKE_IMPORTS = 30, 2, 2
ROSTER_BUDGET_MS = 250.0
HOSTS = ("alpha", "beta", "gamma")
DECLARATION = '''agent "{identity}" {{
    name "Seat {identity}"
    description "Benchmark seat: reviews what the builder produces."
    supervisor "seat-0000"
    desired-state "suspended" reason="waiting for CI"
    restart {{ attempts 3; interval "60s"; delay "0s"; mode "delay" }}
    argv "claude" "--permission-mode" "default"
    ding
    resource "spec" uri="file:///srv/spec.md" reason="the design"
    exec "watch" {{ argv "make" "watch"; keep #true }}
    render {{
        ensure-line ".gitignore" ".st2/"
    }}
}}
'''


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_SEATS} seats")
    smoke = parser.parse_args().smoke
    seats, rounds, imports = (SMOKE_SEATS, SMOKE_ROUNDS, SMOKE_IMPORTS) if smoke else (SEATS, ROUNDS, IMPORTS)
    with tempfile.TemporaryDirectory(prefix="st2-bench-declarations-") as directory:
        root = Path(directory) / "catalog"
        for index in range(seats):
            identity = f"seat-{index:04d}"
            seat = root / "agents" / HOSTS[index % len(HOSTS)] / identity
            seat.mkdir(parents=True)
            (seat / "agent.kdl").write_text(DECLARATION.format(identity=identity))

        from st2.catalog.discovery import discover
        from st2.declarations import load_agent

        discover_ms, load_ms, load_cpu_ms = [], [], []
        for _ in range(rounds):
            start = time.perf_counter()
            found = discover(root)
            middle = time.perf_counter()
            cpu_start = time.process_time()
            for seat in found.seats:
                declaration, diagnostics = load_agent(seat.declaration_path)
                assert declaration is not None and not diagnostics, diagnostics
            end = time.perf_counter()
            load_cpu_ms.append((time.process_time() - cpu_start) * 1000)
            assert len(found.seats) == seats
            discover_ms.append((middle - start) * 1000)
            load_ms.append((end - middle) * 1000)

    probe = ("import time; s=time.perf_counter(); import st2.declarations, st2.catalog.discovery; "
             "print((time.perf_counter()-s)*1000)")
    import_ms = [float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                      check=True).stdout) for _ in range(imports)]

    load = statistics.median(load_ms)
    discover_median, import_median = statistics.median(discover_ms), statistics.median(import_ms)
    budget_ratio = (discover_median + load + import_median) / ROSTER_BUDGET_MS
    print(f"discover {seats} seats: median {discover_median:.1f} ms over {rounds} rounds")
    print(f"load {seats} declarations: median {load:.1f} ms wall ({load / seats * 1000:.0f} us each), "
          f"{statistics.median(load_cpu_ms):.1f} ms CPU (less sensitive to machine load)")
    print(f"import st2.declarations + st2.catalog.discovery: median {import_median:.1f} ms")
    print(f"discover + load + import: {budget_ratio:.2f} of the roster's {ROSTER_BUDGET_MS:g} ms budget")
    print(f"RESULT load_per_declaration_us={load / seats * 1000:.0f} load_627_ms={load:.1f} "
          f"load_627_cpu_ms={statistics.median(load_cpu_ms):.1f} "
          f"discover_627_ms={discover_median:.1f} import_ms={import_median:.1f} "
          f"budget_ratio={budget_ratio:.2f} seats={seats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
