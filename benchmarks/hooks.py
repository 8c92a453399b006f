"""Turn-end liveness hook latency: `st2 hook subagent-stop-liveness` over a scratch dir of 10
launch records, the spawned reader (`st2 check producer-liveness`) included.

Prints the median wall time of 30 firings of the real hook and its ratio to `python -c pass`
with the same interpreter (the anchor: the floor any Python process pays; the hook pays it
twice, once for itself and once for the reader it spawns). Target: ratio <= 2.5.
Runs interleave hook and anchor so machine load weighs on both alike. ``--smoke`` runs the same
path over 3 firings after one warm-up.
Last line: RESULT liveness_median_ms=<x> ratio_python=<y>
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 30
WARM_UPS = 2
SMOKE_RUNS, SMOKE_WARM_UPS = 3, 1
RECORDS = 10
PAYLOAD = b'{"session_id":"bench","hook_event_name":"SubagentStop","stop_hook_active":false}'


CPU_SAMPLES: dict[str, list[float]] = {"hook": [], "anchor": [], "warm-up": []}


def children_cpu_ms() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (usage.ru_utime + usage.ru_stime) * 1000


def timed(command: list[str], cwd: Path, env: dict[str, str], payload: bytes, label: str = "hook") -> tuple[float, int]:
    """Wall milliseconds of one run (and its user+system CPU, grandchildren reaped by it included,
    kept in CPU_SAMPLES: a reading machine load distorts less than wall time)."""
    cpu_before = children_cpu_ms()
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, env=env, input=payload, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - start) * 1000
    CPU_SAMPLES[label].append(children_cpu_ms() - cpu_before)
    return elapsed, completed.returncode


def write_exited_records(scratch: Path, count: int) -> None:
    """``count`` launch records under ``scratch`` naming processes that have already exited."""
    scratch.mkdir()
    for index in range(count):
        exited = subprocess.Popen(["true"])
        exited.wait()
        (scratch / f"job-{index:02d}.run").write_text(f"pid={exited.pid} run=job-{index:02d}\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} firings")
    runs, warm_ups = (SMOKE_RUNS, SMOKE_WARM_UPS) if parser.parse_args().smoke else (RUNS, WARM_UPS)
    # As installed: bytecode caches are written (a wheel install compiles them), so a
    # PYTHONDONTWRITEBYTECODE inherited from a dev shell would time the compiler instead.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DELEGATION_KIT_", "GATE_SDK_")) and k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory(prefix="st2-bench-hooks-") as directory:
        root = Path(directory)
        write_exited_records(root / ".tmp", RECORDS)
        hook = [sys.executable, "-m", "st2", "hook", "subagent-stop-liveness"]
        anchor_command = [sys.executable, "-c", "pass"]
        hook_samples, anchor_samples = [], []
        for _ in range(warm_ups):  # warm-up: bytecode caches and the page cache
            timed(hook, root, env, PAYLOAD, "warm-up")
            timed(anchor_command, root, env, b"", "warm-up")
        for _ in range(runs):
            elapsed, status = timed(hook, root, env, PAYLOAD)
            if status != 0:
                raise SystemExit(f"the hook exited {status}; expected a green allow over {RECORDS} exited records")
            hook_samples.append(elapsed)
            anchor_samples.append(timed(anchor_command, root, env, b"", "anchor")[0])
        log = (root / ".workflow" / "subagent-stop-liveness.log").read_text().splitlines()
        if len(log) != runs + warm_ups or f"verdict=green  spawn=-  records={RECORDS}" not in log[-1]:
            raise SystemExit(f"unexpected log: {log[-1] if log else '(empty)'}")
    hook_median = statistics.median(hook_samples)
    anchor_median = statistics.median(anchor_samples)
    hook_cpu = statistics.median(CPU_SAMPLES["hook"])
    anchor_cpu = statistics.median(CPU_SAMPLES["anchor"])
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    print(f"cpu (user+sys) median: hook {hook_cpu:.1f} ms, python -c pass {anchor_cpu:.1f} ms, ratio {hook_cpu / anchor_cpu:.2f}")
    print(f"python -c pass median: {anchor_median:.1f} ms")
    print(f"st2 hook subagent-stop-liveness median over {runs} runs, {RECORDS} records: {hook_median:.1f} ms (target ratio <= 2.5)")
    print(f"RESULT liveness_median_ms={hook_median:.1f} ratio_python={hook_median / anchor_median:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
