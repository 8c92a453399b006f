"""Roster latency: `st2 agents --json` over a catalog of N seats (default 627) holding all four records.

Prints the median wall time of 20 runs of the real CLI and its ratio to `python -c pass` on the
same machine (the anchor: the floor any Python CLI pays), interleaved so load weighs on both
alike. Two rosters are timed: warm (the host-local declaration cache holds every declaration,
the everyday case: declarations change rarely) and cold (the cache removed before each run, so
every declaration is parsed and the cache stored again). The warm roster's bytes are checked
against the cold one's (the command clock is fixed). Target: <= 250 ms median.
Usage: python benchmarks/roster.py [--seats N] [--smoke] (``--smoke``: the same path over 20 seats, 2 runs)
Last line: RESULT roster_median_ms=<warm> roster_cold_ms=<cold> ratio_python=<warm/anchor>
per_seat_us=<(warm - anchor)/N> roster_cpu_ms=<warm> roster_cold_cpu_ms=<cold> anchor_cpu_ms=<a> seats=<N>
(CPU medians too: on a loaded machine they move far less than wall time.)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SEATS = 627  # the default: a real catalog's size
RUNS = 20
SMOKE_SEATS, SMOKE_RUNS = 20, 2
HOSTS = ("alpha", "beta", "gamma")


def write_catalog(root: Path, now_ms: int, seats: int = SEATS) -> None:
    for index in range(seats):
        host = HOSTS[index % len(HOSTS)]
        identity = f"seat-{index:04d}"
        seat = root / "agents" / host / identity
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "resources" / "archive").mkdir(parents=True)
        (seat / "agent.kdl").write_text(
            f'agent "{identity}" {{\n'
            f'    name "Seat {index}"\n'
            f'    description "Benchmark seat {index} of {seats}."\n'
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


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall and CPU (user + system) milliseconds of one run, and its stdout. CPU time is what the
    command itself costs; wall time also carries whatever else the machine is doing."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    completed = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise SystemExit(f"{command} failed: {completed.stderr.decode()[-2000:]}")
    return wall, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000, completed.stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seats", type=int, default=SEATS)
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_SEATS} seats, {SMOKE_RUNS} runs")
    options = parser.parse_args()
    seats, runs = (SMOKE_SEATS, SMOKE_RUNS) if options.smoke else (options.seats, RUNS)
    with tempfile.TemporaryDirectory(prefix="st2-bench-") as directory:
        root = Path(directory) / "catalog"
        now_ms = int(time.time() * 1000)
        write_catalog(root, now_ms, seats)
        state = Path(directory) / "state"
        env = dict(os.environ, CATALOG=str(root), XDG_STATE_HOME=str(state), ST2_CLOCK_WALL_MS=str(now_ms))
        # Time an installed st2: bytecode compiled once, as a packaged install has it (a dev shell
        # with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module on every run).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        import st2

        subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.dirname(st2.__file__)], check=True)
        command = [sys.executable, "-m", "st2", "agents", "--json"]
        cache = state / "st2" / "cache"
        time.sleep(2.1)  # past the cache's settle bound (st2.runtime.declaration_cache.SETTLE_NS): declarations are old
        cold_bytes = timed(command, env)[2]
        if len(json.loads(cold_bytes)) != seats:
            raise SystemExit(f"expected {seats} rows")
        samples: dict[str, list[tuple[float, float]]] = {"anchor": [], "warm": [], "cold": []}
        for _ in range(runs):
            samples["anchor"].append(timed([sys.executable, "-c", "pass"], env)[:2])
            wall, cpu, warm_bytes = timed(command, env)
            if warm_bytes != cold_bytes:
                raise SystemExit("the warm roster's bytes differ from the cold roster's")
            samples["warm"].append((wall, cpu))
            shutil.rmtree(cache, ignore_errors=True)
            samples["cold"].append(timed(command, env)[:2])
    wall = {name: statistics.median(value[0] for value in values) for name, values in samples.items()}
    cpu = {name: statistics.median(value[1] for value in values) for name, values in samples.items()}
    per_seat_us = (wall["warm"] - wall["anchor"]) / seats * 1000
    print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    print(f"python -c pass median: wall {wall['anchor']:.1f} ms, cpu {cpu['anchor']:.1f} ms")
    for name in ("warm", "cold"):
        print(f"st2 agents --json, cache {name}, median over {runs} runs, {seats} seats: wall {wall[name]:.1f} ms, "
              f"cpu {cpu[name]:.1f} ms (target <= 250 ms; ratio {wall[name] / wall['anchor']:.2f})")
    print(f"per seat above the anchor (warm): {per_seat_us:.0f} us")
    print(f"RESULT roster_median_ms={wall['warm']:.1f} roster_cold_ms={wall['cold']:.1f} "
          f"ratio_python={wall['warm'] / wall['anchor']:.2f} per_seat_us={per_seat_us:.0f} "
          f"roster_cpu_ms={cpu['warm']:.1f} roster_cold_cpu_ms={cpu['cold']:.1f} anchor_cpu_ms={cpu['anchor']:.1f} seats={seats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
