"""Cross-host mail latency over real Syncthing, beside Syncthing's own propagation latency.

Two real Syncthing instances on loopback carry one catalog between hosts ``a`` and ``b``
(tests/multihost: st2's own sync rules as the folder's ``.stignore``, rescan 5 s, the filesystem
watcher on with Syncthing's smallest delay, 1 s). On ``b`` a real `st2 up --host b` runs one
DING seat whose pane is the stand-in TUI (tests/ding/standin_tui.py). Each of ``RUNS`` rounds
measures, in the same run and alternating:

- sync: a plain file written on ``a`` (temp file renamed into the seat's ``resources/``) until
  it exists on ``b`` — the engine's change-propagation latency, the anchor;
- send→paste: ``st2.bus.send.send`` on ``a`` (what `st2 message send` calls) to the seat on
  ``b`` until the stand-in's raw input holds that message's bracketed-paste notice.

Prints both medians (and p90s) and their ratio; the last line is
``RESULT send_to_paste_p50_ms=<x> sync_p50_ms=<y> ratio=<x/y>``. ``--smoke`` runs the same path
over 1 round.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for folder in ("tests", "tests/multihost", "tests/faults"):
    sys.path.insert(0, str(REPO / folder))

from fault_mail import standin_files, standin_seat  # noqa: E402
from multihost_support import poll_for, two_hosts  # noqa: E402
from st2.bus.addressing import resolve_seat  # noqa: E402
from st2.bus.send import send  # noqa: E402
from st2.ding.notice import PASTE_END, PASTE_START, notice_text, shell_comment  # noqa: E402

RUNS = 50
SMOKE_RUNS = 1


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_RUNS} round")
    runs = SMOKE_RUNS if parser.parse_args().smoke else RUNS
    sync_ms: list[float] = []
    paste_ms: list[float] = []
    with two_hosts(with_declarations=False) as hosts:
        hosts.principal("bench", host="a")
        received, events = standin_files(hosts.base, "d0")
        hosts.declare("d0", standin_seat(received, events), host="b")
        hosts.b.up("--interval", "60s")
        ownership = hosts.b.scope.directory / "ding" / "b.d0.json"
        poll_for(lambda: len(hosts.b.running()) == 2 and ownership.exists(),
                 lambda: f"b's DING seat: {hosts.b.log()}", timeout=120, step=0.1)
        hosts.sync.settle()
        seat = resolve_seat(hosts.a.catalog, "b.d0")
        probes_a = hosts.a.catalog / "agents" / "b" / "d0" / "resources" / "probe"
        probes_b = hosts.b.catalog / "agents" / "b" / "d0" / "resources" / "probe"
        probes_a.mkdir(parents=True)
        for index in range(runs):
            temporary = hosts.a.base / f".probe-{index}"
            temporary.write_text(f"probe {index}\n")
            started = time.monotonic()
            os.replace(temporary, probes_a / f"p{index}")
            poll_for(lambda: (probes_b / f"p{index}").exists(), f"probe {index} on b", timeout=60, step=0.002)
            sync_ms.append((time.monotonic() - started) * 1000)

            subject = f"bench {index}"
            started = time.monotonic()
            receipt = send(hosts.a.catalog, seat, sender="a.bench", body=f"message {index}", subject=subject)
            frame = (PASTE_START + shell_comment(notice_text(receipt.filename, subject, "a.bench")) + PASTE_END).encode()
            poll_for(lambda: frame in (received.read_bytes() if received.exists() else b""),
                     f"message {index}'s paste on b", timeout=60, step=0.002)
            paste_ms.append((time.monotonic() - started) * 1000)
    paste_p50, sync_p50 = statistics.median(paste_ms), statistics.median(sync_ms)
    print(f"syncthing propagation a->b (plain file): p50 {sync_p50:.0f} ms  p90 {percentile(sync_ms, 0.9):.0f} ms  "
          f"min {min(sync_ms):.0f} ms  max {max(sync_ms):.0f} ms  ({runs} runs)")
    print(f"st2 send on a -> DING paste on b:         p50 {paste_p50:.0f} ms  p90 {percentile(paste_ms, 0.9):.0f} ms  "
          f"min {min(paste_ms):.0f} ms  max {max(paste_ms):.0f} ms  ({runs} runs)")
    print(f"ratio send->paste / sync: {paste_p50 / sync_p50:.2f}")
    print(f"RESULT send_to_paste_p50_ms={paste_p50:.0f} sync_p50_ms={sync_p50:.0f} ratio={paste_p50 / sync_p50:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
