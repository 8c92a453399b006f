"""Roster latency: `st2 agents --json` over a 627-seat catalog holding all four records.

Prints the median wall time of 20 runs of the real CLI and its ratio to `python -c pass` on the
same machine (the anchor: the floor any Python CLI pays). Target: ≤ 250 ms median.
Last line: RESULT roster_median_ms=<x> ratio_python=<y> seats=627
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEATS = 627
RUNS = 20
HOSTS = ("alpha", "beta", "gamma")


def write_catalog(root: Path, now_ms: int) -> None:
    for index in range(SEATS):
        host = HOSTS[index % len(HOSTS)]
        identity = f"seat-{index:04d}"
        seat = root / "agents" / host / identity
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "resources" / "archive").mkdir(parents=True)
        (seat / "agent.kdl").write_text(
            f'agent "{identity}" {{\n'
            f'    name "Seat {index}"\n'
            f'    description "Benchmark seat {index} of {SEATS}."\n'
            f'    argv "sh" "-c" "sleep 3600"\n'
            f'    ding\n'
            f'}}\n'
        )
        (seat / "status").write_text(f"available\nv1 {now_ms - 1000}\n")
        (seat / "harness-state").write_text(json.dumps({
            "schema": "st2.harness-state.v1", "agent": identity, "harness": "claude",
            "state": "idle", "blockedOn": "none", "inputBuffer": "empty", "ask": "none",
            "reason": None, "exit": None, "ptySession": f"{host}.{identity}",
            "incarnation": "bench", "seq": 3, "sinceMs": now_ms - 5000,
            "writtenAtMs": now_ms - 5000, "transitions": 3,
        }) + "\n")
        (seat / "harness-context").write_text(json.dumps({
            "schema": "st2.harness-context.v1", "agent": identity, "harness": "claude",
            "usedTokens": 92283, "windowTokens": 200000, "usedPercent": 46, "model": "claude",
            "costUsd": 1.25, "sessionTotalTokens": None,
            "rateLimits": {"fiveHour": 31, "sevenDay": 55}, "compactions": 1,
            "lastCompactionMs": now_ms - 60000, "lastCompactionTrigger": "auto",
            "incarnation": "bench", "observedAtMs": now_ms - 4000, "writtenAtMs": now_ms - 4000,
        }) + "\n")
        (seat / "driver-diagnostic").write_text(json.dumps({
            "schema": "st2.driver-diagnostic.v1", "driver": "codex", "stage": "delivery",
            "reason": "transportRejected", "source": "appServer", "producerVersion": "0.0.0",
            "support": "supported", "observedAt": now_ms - 2000,
            "recovery": "publishFailureOrClearOnStageRecovery",
        }) + "\n")


def time_command(command: list[str], env: dict[str, str]) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) milliseconds of each of RUNS runs. CPU time is what the
    command itself costs; wall time also carries whatever else the machine is doing."""
    wall, cpu = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000)
        if completed.returncode != 0:
            raise SystemExit(f"{command} failed: {completed.stderr.decode()[-2000:]}")
    return wall, cpu


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="st2-bench-") as directory:
        root = Path(directory) / "catalog"
        write_catalog(root, int(time.time() * 1000))
        env = dict(os.environ, CATALOG=str(root))
        # Time an installed st2: bytecode compiled once, as a packaged install has it (a dev shell
        # with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every run).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        import st2

        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.dirname(st2.__file__)], check=True)
        st2 = [sys.executable, "-m", "st2", "agents", "--json"]
        first = subprocess.run(st2, env=env, capture_output=True, text=True, check=True)
        rows = json.loads(first.stdout)
        if len(rows) != SEATS:
            raise SystemExit(f"expected {SEATS} rows, got {len(rows)}")
        anchor_wall, anchor_cpu = (statistics.median(samples) for samples in time_command([sys.executable, "-c", "pass"], env))
        roster_wall, roster_cpu = (statistics.median(samples) for samples in time_command(st2, env))
    anchor, roster = anchor_wall, roster_wall
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"python -c pass median: wall {anchor_wall:.1f} ms, cpu {anchor_cpu:.1f} ms")
    print(f"st2 agents --json median over {RUNS} runs, {SEATS} seats: wall {roster_wall:.1f} ms, "
          f"cpu {roster_cpu:.1f} ms (target <= 250 ms; cpu ratio {roster_cpu / anchor_cpu:.2f})")
    print(f"RESULT roster_median_ms={roster:.1f} ratio_python={roster / anchor:.2f} seats={SEATS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
