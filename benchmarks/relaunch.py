"""A relaunch storm: 627 seats on 3 accounts come back after a simulated reboot (issue 36).

Against the real `st2` entry point, real tmux and real processes: the seats (`argv "sleep" …`,
each a PTY agent task on account a0, a1 or a2, declared `relaunch spacing=SPACING concurrency=1`)
are brought up, then "rebooted" — the supervisor and every seat's processes SIGKILLed by PID, the
runtime scopes removed, as a host restart leaves them — and a fresh `st2 up` relaunches them.
(``--cold``: no first generation; the catalog as a reboot leaves it — no runtime scope, no
process — is what the relaunch sees either way, and the first generation costs as much again.)
Measures:
- relaunch_s: from that `st2 up`'s spawn to its first pass reporting every seat running
  (sd_notify STATUS, so nothing polls the records meanwhile);
- bound_s: the admission bound's own minimum, the anchor: (ceil(seats_per_account /
  concurrency) - 1) * spacing — no supervisor can relaunch them sooner without breaking it;
- cpu_ms_per_seat: that supervisor's CPU (user + system, its start-up included; the tmux servers
  it spawns are the seats', not counted) until then, per seat relaunched.
The ratio is relaunch_bound_ratio=<relaunch_s / bound_s>: what the passes, the launches and the
machine add to the spacing itself.
Usage: python benchmarks/relaunch.py [SPACING_MS=250] [--seats N] [--cold] [--smoke]
(``--smoke``: the same path over 30 seats at 50 ms; the keys keep their names, ``seats=`` says the size.)
Last line: RESULT relaunch_s=<x> bound_s=<y> cpu_ms_per_seat=<z> relaunch_bound_ratio=<x/y> seats=<n> spacing_ms=<s>
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from st2.runtime import launch_record  # noqa: E402
from st2.runtime.scope import RuntimeScope  # noqa: E402
from st2.supervisor.backends.process_group import kill_group, reap_children  # noqa: E402

SEATS, ACCOUNTS = 627, 3
SMOKE_SEATS, SMOKE_SPACING_MS = 30, 50
# The first generation comes up fast (it is not measured): many starts per short window.
FIRST_SPACING, FIRST_CONCURRENCY = "1ms", 64


def catalog_kdl(spacing: str, concurrency: int) -> str:
    blocks = "".join(f'    account "a{index}" {{ relaunch spacing="{spacing}" concurrency={concurrency}; }}\n'
                     for index in range(ACCOUNTS))
    return "catalog {\n" + blocks + "}\n"


def make_catalog(root: Path, count: int) -> None:
    for index in range(count):
        seat = root / "agents" / "h" / f"seat-{index:03d}"
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "seat-{index:03d}" {{\n    account "a{index % ACCOUNTS}"\n'
                                        f'    argv "sleep" "7200"\n}}\n')
    (root / "catalog.kdl").write_text(catalog_kdl(FIRST_SPACING, FIRST_CONCURRENCY))


def supervise(env: dict, notify_path: Path, seats: int) -> tuple[float, subprocess.Popen, socket.socket]:
    """Spawn `st2 up` and return the seconds until a pass reports ``seats`` running, the process,
    and its notify socket (kept open: the supervisor goes on sending)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    listener.bind(str(notify_path))
    listener.settimeout(3600)   # one pass launches every seat it may: at 627 PTY seats, minutes
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "st2", "up", "--host", "h", "--interval", "600s"],
                               env={**env, "NOTIFY_SOCKET": str(notify_path)}, cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wanted = f"running={seats}".encode()
    while True:
        message = listener.recv(65536)
        if message.startswith(b"STATUS=pass ") and wanted in message.split():
            return time.perf_counter() - start, process, listener


def reboot(process: subprocess.Popen, scope: RuntimeScope, state: Path) -> None:
    """Every process dies at once — the supervisor, then each seat's tmux server and pane group,
    by PID — and the runtime scopes go; the catalog stays."""
    process.send_signal(signal.SIGKILL)
    process.wait()
    for runtime_id in launch_record.recorded_ids(scope):
        record = launch_record.read(scope, runtime_id)
        if record.socket:
            subprocess.run(["tmux", "-S", record.socket, "kill-server"], capture_output=True)
        kill_group(record.identity, grace_seconds=0)
    reap_children()
    shutil.rmtree(state / "st2" / "scopes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("spacing_ms", nargs="?", type=int, default=250, help="declared spacing (default 250 ms)")
    parser.add_argument("--seats", type=int, default=SEATS, help=f"seats (default {SEATS})")
    parser.add_argument("--cold", action="store_true", help="skip the first generation (see above)")
    parser.add_argument("--smoke", action="store_true", help=f"the same path over {SMOKE_SEATS} seats")
    options = parser.parse_args()
    seats, spacing_ms = (SMOKE_SEATS, SMOKE_SPACING_MS) if options.smoke else (options.seats, options.spacing_ms)
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2b-"))
    catalog, state = base / "c", base / "s"
    make_catalog(catalog, seats)
    env = {**os.environ, "XDG_STATE_HOME": str(state), "ST2_TRANSPORT": "setsid", "CATALOG": str(catalog)}
    env.pop("NOTIFY_SOCKET", None)
    os.environ.update(XDG_STATE_HOME=env["XDG_STATE_HOME"])
    scope = RuntimeScope(catalog, "h")
    supervisors: list[subprocess.Popen] = []
    listeners: list[socket.socket] = []
    try:
        first_s = 0.0
        if not options.cold:
            first_s, first, listener = supervise(env, base / "n1", seats)
            supervisors.append(first)
            listeners.append(listener)
            reboot(first, scope, state)
        (catalog / "catalog.kdl").write_text(catalog_kdl(f"{spacing_ms}ms", 1))

        relaunch_s, second, listener = supervise(env, base / "n2", seats)
        cpu = psutil.Process(second.pid).cpu_times()
        supervisors.append(second)
        listeners.append(listener)
        cpu_ms = (cpu.user + cpu.system) * 1000
        per_account = math.ceil(seats / ACCOUNTS)
        bound_s = (per_account - 1) * spacing_ms / 1000
        print(f"seats={seats} accounts={ACCOUNTS} spacing_ms={spacing_ms} concurrency=1 "
              f"first_generation_s={first_s:.1f} relaunch_s={relaunch_s:.2f} bound_s={bound_s:.2f} "
              f"supervisor_cpu_ms={cpu_ms:.0f}")
        print(f"load average: {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
        print(f"RESULT relaunch_s={relaunch_s:.2f} bound_s={bound_s:.2f} cpu_ms_per_seat={cpu_ms / seats:.1f} "
              f"relaunch_bound_ratio={relaunch_s / bound_s:.2f} seats={seats} spacing_ms={spacing_ms}")
    finally:
        for listener in listeners:
            listener.close()
        for process in supervisors:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=30)
        if catalog.exists():
            subprocess.run([sys.executable, "-m", "st2", "down", "--host", "h"], env=env, cwd=REPO,
                           capture_output=True, timeout=600)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
