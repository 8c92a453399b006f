"""DING latency and footprint: from an inbox write to the paste arriving in the pane.

Runs the real ``st2 ding`` against the stand-in TUI (tests/ding/standin_tui.py) in a private
tmux server, writes one message at a time the way a peer does (temp file renamed into the
inbox), and times the write until the stand-in's byte log holds that notice's paste frame, then
until the stand-in reports it submitted. The notifier's RSS is read from /proc after the runs.
Targets: median write→paste <= 250 ms, RSS <= 20 MiB. Last line:
``RESULT ding_latency_ms=<x> rss_mib=<y>``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "ding"))
sys.path.insert(0, str(REPO / "tests"))

from ding_support import Notifier, Standin, make_seat, ownership_record, wait_for, write_message  # noqa: E402
from st2.ding.notice import PASTE_END, PASTE_START, notice_text  # noqa: E402

RUNS = 30


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    directory = Path(tempfile.mkdtemp(prefix="st2-ding-bench-"))
    catalog = directory / "catalog"
    seat = make_seat(catalog, "builder")
    standin = Standin(directory)
    notifier = Notifier(catalog, "builder", standin.socket, directory / "state", poll_interval=1.0)
    pastes, submits = [], []
    try:
        wait_for(lambda: ownership_record(directory / "state", catalog, "builder").exists(), timeout=20)
        time.sleep(0.5)
        for index in range(RUNS):
            subject = f"bench {index}"
            started = time.monotonic()
            name = write_message(seat, subject)
            frame = (PASTE_START + notice_text(name, subject, "h.planner") + PASTE_END).encode()
            wait_for(lambda: frame in standin.received(), timeout=20, interval=0.002)
            pastes.append((time.monotonic() - started) * 1000)
            wait_for(lambda: len(standin.events("submit")) > index, timeout=20, interval=0.002)
            submits.append((time.monotonic() - started) * 1000)
            time.sleep(0.2)
        rss = rss_mib(notifier.pid)
    finally:
        notifier.stop()
        standin.close()
        shutil.rmtree(directory, ignore_errors=True)
    latency = statistics.median(pastes)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    print(f"write -> paste in pane: median {latency:.1f} ms, p90 {sorted(pastes)[int(RUNS * 0.9)]:.1f} ms "
          f"over {RUNS} messages (target <= 250 ms)")
    print(f"write -> submitted (screen-verified Return): median {statistics.median(submits):.1f} ms")
    print(f"notifier RSS: {rss:.1f} MiB (target <= 20 MiB)")
    print(f"RESULT ding_latency_ms={latency:.1f} rss_mib={rss:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
