"""Message bus throughput and latency on the machine's real disk.

1. `st2 message send` through the real CLI, 20 times (median wall ms), against `python -c pass`
   with the same interpreter as the anchor (interleaved, so load weighs on both alike).
2. 8 concurrent sender processes × 250 messages each into one inbox through the CLI entry point
   in-process (the tests/bus concurrency driver): wall seconds and messages per second, with the
   count of distinct complete files checked.
``--smoke`` runs the same path at a tiny size (3 timed sends, 2 senders x 10 messages).
Last line: RESULT send_median_ms=<x> ratio_python=<y> concurrent_msgs_per_s=<z> fsyncs_per_send=2
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DRIVER = REPO / "tests" / "bus" / "driver_sender.py"
RUNS = 20
SENDERS, EACH = 8, 250
SMOKE_RUNS, SMOKE_SENDERS, SMOKE_EACH = 3, 2, 10


def catalog_in(directory: Path) -> Path:
    root = directory / "catalog"
    for identity, extra in (("alice", ""), ("bob", '    address "robert"\n')):
        seat = root / "agents" / "h1" / identity
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh"\n{extra}}}\n')
    for index in range(8):  # the concurrent senders: a sender must be declared
        principal = root / "principals" / "h1" / f"sender{index}"
        (principal / "resources" / "inbox").mkdir(parents=True)
        (principal / "principal.kdl").write_text(f'principal "sender{index}" host="h1"\n')
    return root


def wall_ms(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the same path at a tiny size")
    smoke = parser.parse_args().smoke
    runs, senders, each = (SMOKE_RUNS, SMOKE_SENDERS, SMOKE_EACH) if smoke else (RUNS, SENDERS, EACH)
    with tempfile.TemporaryDirectory() as scratch:  # /tmp: the real disk, fsyncs included
        root = catalog_in(Path(scratch))
        send = [sys.executable, "-m", "st2", "--catalog", str(root), "message", "send", "robert",
                "--as", "h1.alice", "-m", "benchmark body"]
        anchor = [sys.executable, "-c", "pass"]
        wall_ms(send)
        sends, anchors = [], []
        for _ in range(runs):
            sends.append(wall_ms(send))
            anchors.append(wall_ms(anchor))
        send_median = statistics.median(sends)
        ratio = send_median / statistics.median(anchors)
        print(f"cli send: median {send_median:.1f} ms over {runs}, python -c pass {statistics.median(anchors):.1f} ms")

        root2 = catalog_in(Path(scratch) / "concurrent")
        started = time.perf_counter()
        workers = [subprocess.Popen([sys.executable, str(DRIVER), "senders", str(root2), str(i), str(each)],
                                    cwd=REPO, stdout=subprocess.DEVNULL) for i in range(senders)]
        for worker in workers:
            if worker.wait() != 0:
                print("a sender failed", file=sys.stderr)
                return 1
        elapsed = time.perf_counter() - started
        inbox = root2 / "agents" / "h1" / "bob" / "resources" / "inbox"
        count = len(list(inbox.iterdir()))
        print(f"{senders} x {each} concurrent sends: {elapsed:.1f} s, {count} files")
        if count != senders * each:
            print(f"expected {senders * each} distinct files", file=sys.stderr)
            return 1
    print(f"RESULT send_median_ms={send_median:.1f} ratio_python={ratio:.2f} "
          f"concurrent_msgs_per_s={senders * each / elapsed:.0f} fsyncs_per_send=2")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
