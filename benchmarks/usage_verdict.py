"""Benchmark: the wall time of `st2 usage verdict` (a hot path every Agent dispatch pays through
the budget guard) against the floor every Python process pays, `python -c pass`, on the same
interpreter and machine.

Runs the real entry point (`python -m st2 usage verdict`) 50 times over a fresh snapshot in a
hermetic sandbox (the DELEGATION_KIT_* namespace stripped, every path inside a temp dir),
interleaved with 50 `python -c pass` runs so machine load hits both alike, and reports medians.
Target: ratio <= 2.0. ``--smoke`` runs the same path 3 times each after one warm-up. The last
line is machine-readable:

    RESULT verdict_median_ms=<x> ratio_python=<y>
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 50
WARM_UPS = 3
SMOKE_RUNS, SMOKE_WARM_UPS = 3, 1
REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    result = subprocess.run(argv, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1, 2):
        raise SystemExit(f"{argv} exited {result.returncode}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path, {SMOKE_RUNS} runs each")
    runs, warm_ups = (SMOKE_RUNS, SMOKE_WARM_UPS) if parser.parse_args().smoke else (RUNS, WARM_UPS)
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        now = int(time.time())
        usage_file = root / "usage.txt"
        usage_file.write_text(
            f"five_hour_used_pct=42.5\nfive_hour_resets_at={now + 3 * 3600}\nupdated_at={now}\n"
            f"seven_day_used_pct=12\nseven_day_resets_at={now + 5 * 86400}\naccount=acct-bench\n"
        )
        (root / "claude.json").write_text('{"oauthAccount": {"accountUuid": "acct-bench"}}')
        (root / "knobs").write_text("")
        env = {name: value for name, value in os.environ.items() if not name.startswith("DELEGATION_KIT_")}
        env.update(
            HOME=str(root),
            XDG_CONFIG_HOME=str(root / "config"),
            DELEGATION_KIT_USAGE_FILE=str(usage_file),
            DELEGATION_KIT_ACCOUNT_CONFIG=str(root / "claude.json"),
            DELEGATION_KIT_KNOB_FILE=str(root / "knobs"),
        )
        verdict_argv = [sys.executable, "-m", "st2", "usage", "verdict"]
        python_argv = [sys.executable, "-c", "pass"]
        check = subprocess.run(verdict_argv, env=env, cwd=REPO, capture_output=True, text=True)
        if check.returncode != 0 or "-> OK" not in check.stdout:
            raise SystemExit(f"the benchmark snapshot did not verdict OK: {check.stdout}{check.stderr}")
        for _ in range(warm_ups):  # warm the page cache for both
            timed(verdict_argv, env)
            timed(python_argv, env)
        verdict_times, python_times = [], []
        for _ in range(runs):
            verdict_times.append(timed(verdict_argv, env))
            python_times.append(timed(python_argv, env))
    verdict_median = statistics.median(verdict_times) * 1000
    python_median = statistics.median(python_times) * 1000
    ratio = verdict_median / python_median
    print(f"python: {sys.version.split()[0]} ({sys.executable}); runs: {runs} each, interleaved")
    print(f"st2 usage verdict: median {verdict_median:.1f} ms (min {min(verdict_times) * 1000:.1f}, max {max(verdict_times) * 1000:.1f})")
    print(f"python -c pass:    median {python_median:.1f} ms (min {min(python_times) * 1000:.1f}, max {max(python_times) * 1000:.1f})")
    print(f"target ratio <= 2.0: {'met' if ratio <= 2.0 else 'MISSED'}")
    print(f"RESULT verdict_median_ms={verdict_median:.1f} ratio_python={ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
