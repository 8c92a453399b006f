"""Codex pump latency and footprint: from an inbox write to ``turn/start`` on the wire.

Runs the real ``st2 driver codex-session`` around the stand-in app-server
(tests/drivers/codex/standin_app_server.py, the 0.171.0 frames), writes one message at a time the
way a peer does (temp file renamed into the inbox), and times the write until the stand-in reads
the ``turn/start`` carrying it (both sides on CLOCK_MONOTONIC), waiting for the ledger to record
the consumption before the next one. The wrapper's RSS is read from /proc after the runs.
Anchors (issue 16): median write→turn/start <= 100 ms, wrapper RSS <= 25 MiB; the ratios are to
those. ``--smoke`` runs the same path over 3 messages. Last line:
``RESULT pump_latency_ms=<x> rss_mib=<y> latency_anchor_ratio=<x/100> rss_anchor_ratio=<y/25>``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "drivers" / "codex"))
sys.path.insert(0, str(REPO / "tests"))

from codex_support import HOST, Wrapper, make_seat, poll_for, record, write_message  # noqa: E402

RUNS = 50
SMOKE_RUNS = 3
LATENCY_ANCHOR_MS = 100.0
RSS_ANCHOR_MIB = 25.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def consumed(state: Path, catalog: Path) -> int:
    path = next(iter(state.glob(f"**/delivery/{HOST}.coder/delivery-ledger.json")), None)
    if path is None:
        return 0
    return sum(entry["phase"] == "consumed" for entry in json.loads(path.read_text())["entries"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} messages")
    runs = SMOKE_RUNS if parser.parse_args().smoke else RUNS
    directory = Path(tempfile.mkdtemp(prefix="st2-codex-bench-"))
    catalog = directory / "catalog"
    seat = make_seat(catalog)
    timing = directory / "timing"
    latencies = []
    wrapper = None
    try:
        wrapper = Wrapper(catalog, directory, env={"STANDIN_TIMING": str(timing)})
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle", 30)
        for index in range(runs):
            started = time.monotonic()
            write_message(seat, f"bench {index}")
            arrival = poll_for(lambda: timing.exists() and len(timing.read_text().split()) > index
                               and float(timing.read_text().split()[index]), "turn/start", 20)
            latencies.append((arrival - started) * 1000)
            poll_for(lambda: consumed(directory / "state", catalog) > index
                     and (record(seat, "harness-state") or {}).get("state") == "idle", "consumed and idle", 20)
        rss = rss_mib(wrapper.process.pid)
    finally:
        if wrapper is not None:
            wrapper.stop()
        shutil.rmtree(directory, ignore_errors=True)
    latency = statistics.median(latencies)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    print(f"inbox write -> turn/start on the wire: median {latency:.1f} ms, p90 "
          f"{sorted(latencies)[int(runs * 0.9)]:.1f} ms over {runs} messages "
          f"({latency / LATENCY_ANCHOR_MS:.2f}x the 100 ms anchor)")
    print(f"wrapper RSS: {rss:.1f} MiB ({rss / RSS_ANCHOR_MIB:.2f}x the 25 MiB anchor)")
    print(f"RESULT pump_latency_ms={latency:.1f} rss_mib={rss:.1f} latency_anchor_ratio={latency / LATENCY_ANCHOR_MS:.2f} "
          f"rss_anchor_ratio={rss / RSS_ANCHOR_MIB:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
