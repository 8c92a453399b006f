"""What resource observation costs the host: 627 seats with two ``file:`` bindings each.

One observation pass is every binding dispatched an ``Observe`` and closed by its result: the
host's side (st2.resources.host.ResourceHost: dispatch, the bounded read of each line, the
acceptance core, the state record writes) runs in this process, timed by wall clock and by its
thread's CPU time. The provider side is the built-in ``file:`` runtime's own answer function
(st2.resources.runtime.answer) serving every seat's real socket from one helper process, so the
host reads real sockets and the runtime's work is not charged to the host.

Three passes are timed: the first (every binding published: 1,254 state records written), the
steady pass (nothing changed: every answer ``Unchanged``, no record written inside the
heartbeat) and a pass after a tenth of the documents changed; then what the host's thread costs
while nothing is due (its CPU share over a few seconds). The anchor is ``build_roster``
(the body of ``st2 agents --json``) over the same catalog: what reading the fleet once costs.
Then ``benchmarks/resync.py`` runs over the same number of seats (``--smoke`` passed on) and its
``file:`` change → subscriber inbox p99 joins this line as ``resync_p99_ms``.

Last, what one built-in provider runtime costs in memory: ``--runtimes`` real ``st2
resource-runtime file`` tasks launched through the exec backend, first forked by a real seat
host (the default), then spawned (``ST2_SEAT_HOST=off``); each answers one ``Observe``, then its
PSS is read (``benchmarks/fleet_memory.py``'s ``pss_kib``). ``runtime_pss_mib`` is the forked
mean, ``spawned_runtime_pss_mib`` the spawned one (the seat host and its zygote, shared by the
whole scope, are not counted in either).

Usage: python benchmarks/resources.py [--seats 627] [--rounds 5] [--runtimes 20] [--smoke]
(``--smoke``: 8 seats, 2 rounds, 4 runtimes).
Last line: RESULT observe_pass_ms=<steady median> first_pass_ms=<…> changed_pass_ms=<…>
host_cpu_ms=<steady median> idle_cpu_pct=<…> anchor_roster_ms=<…> ratio=<observe_pass_ms/anchor_roster_ms>
resync_p99_ms=<benchmarks/resync.py's p99> runtime_pss_mib=<…> spawned_runtime_pss_mib=<…>
runtimes=<n> seats=<n>
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def serve(scope: Path, runtime_ids: list[str]) -> None:
    """The helper: every runtime id's socket, each answered by the built-in file runtime."""
    from st2.resources import protocol
    from st2.resources.runtime import answer
    from st2.runtime import layout

    selector = selectors.DefaultSelector()
    memory: dict = {}
    for runtime_id in runtime_ids:
        path = str(layout.resource_socket(scope, runtime_id))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen(2)
        selector.register(listener, selectors.EVENT_READ, ("listen", runtime_id))
    print("ready", flush=True)
    buffers: dict = {}
    while True:
        for key, _ in selector.select():
            kind, runtime_id = key.data
            if kind == "listen":
                connection, _ = key.fileobj.accept()
                registration = f"bench-{runtime_id}"
                connection.sendall(protocol.encode_hello(protocol.Hello("file", registration, ("demand",))))
                selector.register(connection, selectors.EVENT_READ, ("connection", registration))
                buffers[connection] = b""
                continue
            chunk = key.fileobj.recv(65536)
            if not chunk:
                selector.unregister(key.fileobj)
                key.fileobj.close()
                continue
            buffers[key.fileobj] += chunk
            while b"\n" in buffers[key.fileobj]:
                line, buffers[key.fileobj] = buffers[key.fileobj].split(b"\n", 1)
                observe = protocol.decode_observe(line + b"\n")
                key.fileobj.sendall(protocol.encode_result(answer(observe, "file", memory)))


def build(base: Path, seats: int) -> tuple[Path, list]:
    from st2.resources.host import Watched

    catalog = base / "catalog"
    documents = base / "documents"
    documents.mkdir(parents=True)
    watched = []
    for index in range(seats):
        identity = f"seat{index:03d}"
        directory = catalog / "agents" / "h" / identity
        directory.mkdir(parents=True)
        bindings = []
        for name in ("now", "notes"):
            document = documents / f"{identity}-{name}.md"
            document.write_text(f"# {identity} {name}\n" + "working state line\n" * 40)
            bindings.append(f'    resource "{name}" uri="file://{document}"')
            watched.append(Watched(f"h.{identity}", name, f"file://{document}", "file", str(directory),
                                   f"h.{identity}.resource-file", {"path": str(document)}, 3600.0, 30.0, True))
        (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sleep" "600"\n'
                                             + "\n".join(bindings) + "\n}\n")
    return catalog, watched


def one_pass(resource_host) -> tuple[float, float]:
    """(wall ms, host CPU ms) of one full observation pass."""
    resource_host.due_now()
    wall, cpu = time.perf_counter(), time.thread_time()
    resource_host.step(0.0)
    while not resource_host.settled():
        resource_host.step(0.05)
    return (time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000


def runtime_pss_mib(base: Path, count: int, forked: bool) -> float:
    """The mean PSS of ``count`` built-in ``file:`` runtimes launched as the supervisor launches
    them (st2/supervisor/lowering.py), forked by a seat host or spawned, each after one answer."""
    from fleet_memory import cmdline, pss_kib
    from st2.resources import protocol
    from st2.runtime import layout
    from st2.runtime.scope import RuntimeScope
    from st2.seathost import wire
    from st2.seathost.client import SeatHostClient
    from st2.supervisor.backends.backend import TaskSpec
    from st2.supervisor.backends.exec_backend import ExecBackend
    from st2.supervisor.lowering import RESOURCE_SOCKET_VARIABLE, st2_command

    os.environ["ST2_TRANSPORT"] = "setsid"   # never a systemd scope per task here
    mode = "forked" if forked else "spawned"
    scope = RuntimeScope(base / "catalog", "h", state_dir=base / f"runtimes-{mode}")
    logs = base / f"logs-{mode}"
    logs.mkdir()
    command = st2_command()
    host = SeatHostClient(scope.directory, logs / "seat-host.log", command, dict(os.environ)) if forked else None
    backend = ExecBackend(scope, logs, seat_host=host, st2_command=command)
    document = base / "runtime-document.md"
    document.write_text("working state line\n" * 40)
    records, values = [], []
    try:
        for index in range(count):
            runtime_id = f"h.seat{index:03d}.resource-file"
            socket_path = layout.resource_socket(scope.directory, runtime_id)
            records.append(backend.launch(TaskSpec(runtime_id, "exec", (*command, "resource-runtime", "file"),
                                                   {**os.environ, RESOURCE_SOCKET_VARIABLE: str(socket_path)},
                                                   str(base))))
            deadline = time.monotonic() + 30
            while "listening on" not in (backend.log_path(runtime_id).read_text()
                                         if backend.log_path(runtime_id).exists() else ""):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{runtime_id} never listened (see {logs})")
                time.sleep(0.02)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
                connection.settimeout(30)
                connection.connect(str(socket_path))
                reader = connection.makefile("rb")
                hello = protocol.decode_hello(reader.readline())
                connection.sendall(protocol.encode_observe(protocol.Observe(
                    1, runtime_id, "now", hello.registration, f"file://{document}", {"path": str(document)})))
                assert protocol.decode_result(reader.readline()).kind == protocol.PUBLISHED
        if forked and not all("seat-host" in cmdline(record.pid) for record in records):
            raise RuntimeError(f"a runtime was spawned, not forked by the seat host (see {logs})")
        values = [pss_kib(record.pid) or 0 for record in records]
        print(f"{count} {mode} file: runtimes: mean PSS {statistics.mean(values) / 1024:.2f} MiB "
              f"(min {min(values) / 1024:.2f}, max {max(values) / 1024:.2f})")
    finally:
        for record in records:
            backend.kill(record)
        backend.reap()
        if host is not None:
            try:
                wire.request(wire.socket_path(scope.directory), {"op": "retire"}, timeout=5.0)
            except OSError:
                pass
    return statistics.mean(values) / 1024


def resync_figure(seats: int, smoke: bool) -> str | None:
    """benchmarks/resync.py's ``resync_p99_ms`` over ``seats`` seats (its own output shown), or
    None when it failed or printed no such figure."""
    argv = [sys.executable, str(Path(__file__).with_name("resync.py")),
            *(["--smoke"] if smoke else ["--seats", str(seats)])]
    result = subprocess.run(argv, capture_output=True, text=True)
    sys.stdout.write("".join(f"  resync: {line}\n" for line in result.stdout.splitlines()))
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    fields = dict(word.split("=", 1) for word in lines[-1].split()[1:] if "=" in word) if lines else {}
    if result.returncode != 0 or "resync_p99_ms" not in fields:
        print(f"benchmarks/resync.py failed (exit {result.returncode}): {result.stderr[-400:]}", file=sys.stderr)
        return None
    return fields["resync_p99_ms"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=627)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runtimes", type=int, default=20)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--serve", nargs=2, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.serve:
        serve(Path(arguments.serve[0]), Path(arguments.serve[1]).read_text().split())
        return 0
    if arguments.smoke:
        arguments.seats, arguments.rounds, arguments.runtimes = 8, 2, 4
    from st2.resources.host import ResourceHost
    from st2.roster.build import build_roster

    base = Path(tempfile.mkdtemp(prefix="st2-bench-resources-"))
    helper = None
    resource_host = None
    try:
        catalog, watched = build(base, arguments.seats)
        scope = base / "scope"
        (scope / "staging").mkdir(parents=True)
        ids = base / "runtime-ids"
        ids.write_text("\n".join(sorted({item.runtime_id for item in watched})))
        helper = subprocess.Popen([sys.executable, __file__, "--serve", str(scope), str(ids)],
                                  stdout=subprocess.PIPE, text=True, start_new_session=True)
        assert helper.stdout.readline().strip() == "ready"
        resource_host = ResourceHost(scope, lambda: int(time.time() * 1000), lambda line: None)
        resource_host.configure(watched)
        first_ms, _ = one_pass(resource_host)
        steady = [one_pass(resource_host) for _ in range(arguments.rounds)]
        changed = []
        for round_number in range(arguments.rounds):
            for item in watched[round_number::10]:
                Path(item.target["path"]).write_text(f"changed in round {round_number}\n")
            changed.append(one_pass(resource_host)[0])
        idle_seconds = 1.0 if arguments.smoke else 5.0
        idle_cpu, idle_end = time.thread_time(), time.monotonic() + idle_seconds
        while time.monotonic() < idle_end:
            resource_host.step(0.2)                       # nothing due: what waiting costs the host
        idle_pct = (time.thread_time() - idle_cpu) / idle_seconds * 100
        os.environ["XDG_STATE_HOME"] = str(base / "state")
        roster = []
        for _ in range(arguments.rounds):
            started = time.perf_counter()
            build_roster(catalog, int(time.time() * 1000), host="h")
            roster.append((time.perf_counter() - started) * 1000)
        observe_ms = statistics.median(wall for wall, _ in steady)
        cpu_ms = statistics.median(cpu for _, cpu in steady)
        anchor_ms = statistics.median(roster)
        print(f"seats {arguments.seats}, bindings {len(watched)}: first pass {first_ms:.1f} ms, "
              f"steady pass {observe_ms:.1f} ms (host CPU {cpu_ms:.1f} ms), changed pass "
              f"{statistics.median(changed):.1f} ms; idle host CPU {idle_pct:.2f} %; anchor build_roster {anchor_ms:.1f} ms")
        resync_p99 = resync_figure(arguments.seats, arguments.smoke)
        if resync_p99 is None:
            return 1
        forked_mib = runtime_pss_mib(base, arguments.runtimes, forked=True)
        spawned_mib = runtime_pss_mib(base, arguments.runtimes, forked=False)
        print(f"RESULT observe_pass_ms={observe_ms:.1f} first_pass_ms={first_ms:.1f} "
              f"changed_pass_ms={statistics.median(changed):.1f} host_cpu_ms={cpu_ms:.1f} "
              f"idle_cpu_pct={idle_pct:.2f} anchor_roster_ms={anchor_ms:.1f} ratio={observe_ms / anchor_ms:.2f} "
              f"resync_p99_ms={resync_p99} runtime_pss_mib={forked_mib:.2f} "
              f"spawned_runtime_pss_mib={spawned_mib:.2f} runtimes={arguments.runtimes} seats={arguments.seats}")
        return 0
    finally:
        if resource_host is not None:
            resource_host.stop()
        if helper is not None:
            os.killpg(helper.pid, signal.SIGKILL)
            helper.wait()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
