"""DING latency and footprint: from an inbox write to the paste arriving in the pane.

Runs the real ``st2 ding`` against the stand-in TUI (tests/ding/standin_tui.py) in a private
tmux server, writes one message at a time the way a peer does (temp file renamed into the
inbox), and times the write until the stand-in's byte log holds that notice's paste frame (the
notice typed as a plain seat gets it, an inert shell comment), then until the stand-in reports it
submitted. The notifier's RSS is read from /proc after the runs.
Targets: median write→paste <= 250 ms, RSS <= 20 MiB; the ratios are to those targets.
``--smoke`` runs the same path over 3 messages. Last line:
``RESULT ding_latency_ms=<x> rss_mib=<y> latency_target_ratio=<x/250> rss_target_ratio=<y/20>``.
"""

from __future__ import annotations

import argparse
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

from ding_support import Notifier, Standin, make_seat, poll_for, typed_notice, write_message  # noqa: E402
from st2.ding.notice import PASTE_END, PASTE_START  # noqa: E402

RUNS = 30
SMOKE_RUNS = 3
LATENCY_TARGET_MS = 250.0
RSS_TARGET_MIB = 20.0


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} messages")
    runs = SMOKE_RUNS if parser.parse_args().smoke else RUNS
    directory = Path(tempfile.mkdtemp(prefix="st2-ding-bench-"))
    catalog = directory / "catalog"
    seat = make_seat(catalog, "builder")
    pastes, submits = [], []
    standin = notifier = None
    try:
        standin = Standin(directory)
        notifier = Notifier(catalog, "builder", standin.socket, directory / "state", poll_interval=1.0)
        notifier.wait_started(timeout=20)
        time.sleep(0.5)
        for index in range(runs):
            subject = f"bench {index}"
            started = time.monotonic()
            name = write_message(seat, subject)
            frame = (PASTE_START + typed_notice(name, subject, "h.planner") + PASTE_END).encode()
            poll_for(lambda: frame in standin.received(), f"message {index}'s paste", timeout=20, step=0.002)
            pastes.append((time.monotonic() - started) * 1000)
            poll_for(lambda: len(standin.events("submit")) > index, f"message {index}'s submit", timeout=20,
                     step=0.002)
            submits.append((time.monotonic() - started) * 1000)
            time.sleep(0.2)
        rss = rss_mib(notifier.pid)
    finally:
        if notifier is not None:
            notifier.stop()
        if standin is not None:
            standin.close()
        shutil.rmtree(directory, ignore_errors=True)
    latency = statistics.median(pastes)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    print(f"write -> paste in pane: median {latency:.1f} ms, p90 {sorted(pastes)[int(runs * 0.9)]:.1f} ms "
          f"over {runs} messages (target <= {LATENCY_TARGET_MS:g} ms; ratio {latency / LATENCY_TARGET_MS:.2f})")
    print(f"write -> submitted (screen-verified Return): median {statistics.median(submits):.1f} ms")
    print(f"notifier RSS: {rss:.1f} MiB (target <= {RSS_TARGET_MIB:g} MiB; ratio {rss / RSS_TARGET_MIB:.2f})")
    print(f"RESULT ding_latency_ms={latency:.1f} rss_mib={rss:.1f} latency_target_ratio={latency / LATENCY_TARGET_MS:.2f} "
          f"rss_target_ratio={rss / RSS_TARGET_MIB:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
