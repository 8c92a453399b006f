"""Supervisor cost over a 627-seat catalog of exec seats (each `exec "main" { argv "sleep" … }`).

Measures, against the real `st2` entry point and real processes:
- noop_pass_ms: one reconcile pass (discovery, lowering, observing 627 live tasks) with everything
  already running — in-process, the median of 5 (target <= 1000 ms); `st2 up --once` wall time
  (Python start-up included) is printed beside it;
- adopt_100_ms: a fresh `st2 up` over 100 live tasks whose previous supervisor was SIGKILLed,
  from spawn to its READY=1 (sd_notify, first pass done) (target <= 2000 ms);
- adopt_627_ms: the same over the whole 627-seat catalog, every task live and adopted (the
  resident supervisor below; target <= 2000 ms, as adopting 100 of 627 can cost no more);
- idle_cpu_pct: the running supervisor's CPU over IDLE seconds with 627 live tasks while this
  script reads every declaration twice a second (target <= 0.5 %); the passes the supervisor
  ran meanwhile are printed (expected 0: reads never wake it);
- rss_mib: that supervisor's resident memory.
The ratios are to the targets: noop_pass_target_ratio=<x/1000>, adopt_target_ratio=<the slower
adoption / 2000>, idle_cpu_target_ratio=<z/0.5>.
Usage: python benchmarks/supervisor.py [IDLE_SECONDS=60] [--smoke]
(``--smoke``: the same path over 10 seats, 3 of them adopted, 1 s idle; the keys keep their
full-size names, ``seats=`` and ``adopted=`` say the sizes.)
Last line: RESULT noop_pass_ms=<x> adopt_100_ms=<y> adopt_627_ms=<v> idle_cpu_pct=<z> rss_mib=<w>
noop_pass_target_ratio=… adopt_target_ratio=… idle_cpu_target_ratio=… seats=<n> adopted=<m>
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from st2.catalog.location import CatalogLocation  # noqa: E402
from st2.supervisor.catalog_view import read_catalog  # noqa: E402
from st2.supervisor.reconcile import Reconciler  # noqa: E402
from st2.runtime.scope import RuntimeScope  # noqa: E402

SEATS = 627
ADOPT = 100
SMOKE_SEATS, SMOKE_ADOPT, SMOKE_IDLE = 10, 3, 1.0
NOOP_PASS_TARGET_MS, ADOPT_TARGET_MS, IDLE_CPU_TARGET_PCT = 1000.0, 2000.0, 0.5


def make_catalog(root: Path, count: int) -> None:
    for index in range(count):
        seat = root / "agents" / "h" / f"seat-{index:03d}"
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "seat-{index:03d}" {{\n    exec "main" {{ argv "sleep" "7200"; }}\n}}\n')


def st2(env: dict, *arguments: str, **keywords) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "st2", *arguments, "--host", "h"], env=env, cwd=REPO,
                          capture_output=True, text=True, **keywords)


def ready_time(env: dict, notify_path: Path, keep: list | None = None) -> tuple[float, subprocess.Popen]:
    """Spawn `st2 up` and time it to READY=1. With ``keep``, the notify socket stays open and is
    appended to it (to count later STATUS lines, one per pass)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(notify_path))
    listener.settimeout(60)
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "st2", "up", "--host", "h", "--interval", "600s"],
                               env={**env, "NOTIFY_SOCKET": str(notify_path)}, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    while b"READY=1" not in listener.recv(65536):
        pass
    elapsed = (time.perf_counter() - start) * 1000
    if keep is not None:
        keep.append(listener)
        return elapsed, process
    listener.close()
    notify_path.unlink()
    return elapsed, process


def status_lines(listener: socket.socket) -> int:
    listener.setblocking(False)
    count = 0
    while True:
        try:
            count += listener.recv(65536).startswith(b"STATUS=pass ")
        except BlockingIOError:
            return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("idle", nargs="?", type=float, default=60.0, help="idle seconds measured (default 60)")
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_SEATS} seats")
    options = parser.parse_args()
    seats, adopt, idle_seconds = (SMOKE_SEATS, SMOKE_ADOPT, SMOKE_IDLE) if options.smoke else (SEATS, ADOPT, options.idle)
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2b-"))
    big, small = base / "big", base / "small"
    make_catalog(big, seats)
    make_catalog(small, adopt)
    env = {**os.environ, "XDG_STATE_HOME": str(base / "s"), "ST2_TRANSPORT": "setsid"}
    env.pop("NOTIFY_SOCKET", None)
    supervisors: list[subprocess.Popen] = []
    try:
        start = time.perf_counter()
        launched = st2({**env, "CATALOG": str(big)}, "up", "--once", timeout=600)
        launch_ms = (time.perf_counter() - start) * 1000
        assert launched.returncode == 0, launched.stderr[-2000:]

        os.environ.update(XDG_STATE_HOME=env["XDG_STATE_HOME"], ST2_TRANSPORT="setsid")
        location = CatalogLocation(big, "h")
        passes = []
        reconciler = Reconciler(location, scope=RuntimeScope(big, "h"), output=io.StringIO())
        for _ in range(6):
            begin = time.perf_counter()
            report = reconciler.run_pass(read_catalog(location))
            passes.append((time.perf_counter() - begin) * 1000)
            assert not report.launched and len(report.running) == seats, report.summary()
        noop_pass_ms = statistics.median(passes[1:])
        begin = time.perf_counter()
        assert st2({**env, "CATALOG": str(big)}, "up", "--once", timeout=600).returncode == 0
        noop_cli_ms = (time.perf_counter() - begin) * 1000

        small_env = {**env, "CATALOG": str(small)}
        _, first = ready_time(small_env, base / "n1")
        first.send_signal(signal.SIGKILL)
        first.wait()
        adopt_ms, second = ready_time(small_env, base / "n2")
        supervisors.append(second)

        kept: list = []
        adopt_all_ms, resident = ready_time({**env, "CATALOG": str(big)}, base / "n3", keep=kept)
        supervisors.append(resident)
        process = psutil.Process(resident.pid)
        status_lines(kept[0])
        before = process.cpu_times()
        deadline = time.monotonic() + idle_seconds
        while time.monotonic() < deadline:           # read the catalog the whole time
            for seat in big.glob("agents/h/*/agent.kdl"):
                seat.read_bytes()
            time.sleep(0.5)
        after = process.cpu_times()
        idle_passes = status_lines(kept[0])
        kept[0].close()
        cpu = (after.user - before.user + after.system - before.system) / idle_seconds * 100
        rss_mib = process.memory_info().rss / (1024 * 1024)

        print(f"seats={seats} first_launch_ms={launch_ms:.0f} noop_cli_ms={noop_cli_ms:.0f} "
              f"passes_ms={','.join(f'{value:.0f}' for value in passes)} idle_seconds={idle_seconds:g} "
              f"passes_while_idle_and_read={idle_passes}")
        print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
        print(f"RESULT noop_pass_ms={noop_pass_ms:.0f} adopt_{ADOPT}_ms={adopt_ms:.0f} adopt_{SEATS}_ms={adopt_all_ms:.0f} "
              f"idle_cpu_pct={cpu:.2f} rss_mib={rss_mib:.1f} "
              f"noop_pass_target_ratio={noop_pass_ms / NOOP_PASS_TARGET_MS:.2f} "
              f"adopt_target_ratio={max(adopt_ms, adopt_all_ms) / ADOPT_TARGET_MS:.2f} "
              f"idle_cpu_target_ratio={cpu / IDLE_CPU_TARGET_PCT:.2f} seats={seats} adopted={adopt}")
    finally:
        for process in supervisors:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
        for catalog in (big, small):
            if catalog.exists():
                st2({**env, "CATALOG": str(catalog)}, "down", timeout=600)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
