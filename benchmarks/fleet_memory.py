"""st2's own memory per seat under a real ``st2 up``, and the inotify instances it holds.

Builds a catalog of N seats (default 100; ``--seats 627`` for the full size) in five kinds, in
turn: shell seats (``argv`` of a stand-in shell program plus ``ding``), Claude seats (the
``claude { … }`` driver block around a stand-in harness, plus ``ding``), Codex seats and
opencode seats (the native wrappers around the stand-in servers the driver tests use,
tests/drivers/codex/standin_app_server.py and tests/drivers/opencode/standin_opencode.py),
the latter twice: ``opencode`` with ``view "transcript"`` and ``opencode-attach`` in the default
view, where the pane runs the stand-in's TUI (``standin_opencode.py attach``, not st2, not
counted). ``--mix shell`` (or ``claude``, ``codex``, ``opencode``, ``opencode-attach``, a comma
list) narrows the kinds.

Runs the real ``st2 up`` (setsid transport, a private ``XDG_STATE_HOME``) until every declared
task has a live launch record, waits for the fleet to settle, then sums PSS
(``/proc/<pid>/smaps_rollup``) of every st2 process per seat: the DING notifier, the session
wrapper (the pane process of a driver seat; a Claude wrapper while Claude runs is the slim anchor,
``python -S -I -c … st2/drivers/anchor.py``, counted as st2 too, and the report says how many
are, and how many sessions the seat host keeps) and any other st2 process in the task's process
tree; the harness stand-ins are not st2 and are not counted. A native seat whose wrapper the
seat host forked (st2.seathost.session_fork) counts its pane anchor (``sh``) and the forked
wrapper, which is the host's zygote's child, found from the anchor's command line. Each seat's tmux server is
reported separately; host-level st2 processes that serve every seat (the fork server, its zygote and the
DING service, when they run) are divided across the seats and included in ``pss_per_seat_mib``;
the supervisor is reported on its own. ``ding_pss_mib`` is the mean PSS of a seat's DING task (a
stub whose loop the DING service runs, :mod:`st2.ding.stub`), ``ding_service_pss_mib`` the DING
service's whole PSS, and ``self_serving`` counts DING tasks not served by the service (a stub
serving its seat itself because the service is gone or could not be had, or a spawned notifier):
each of those costs a whole notifier. ``inotify_instances`` counts ``anon_inode:inotify`` descriptors held by
st2 processes (the supervisor's included), to be read against ``fs.inotify.max_user_instances``
(128 by default). The anchor is a bare ``python3 -S`` (PSS of one, measured beside the fleet).

Targets (st2's own processes only, tmux not counted): <= 4 MiB per shell seat with DING,
<= 6 MiB per Claude seat, <= 8 MiB per native seat. ``--smoke`` runs the same path over one seat
of each kind, settling and sampling idle CPU for 1 s.

Last line: ``RESULT pss_per_seat_mib=… ding_pss_mib=… wrapper_pss_mib=… tmux_pss_mib=…
supervisor_pss_mib=… inotify_instances=… seats=… ding_service_pss_mib=… self_serving=…
ratio_anchor=<pss_per_seat_mib / the anchor's PSS>``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from st2.runtime import launch_record  # noqa: E402
from st2.runtime.scope import RuntimeScope  # noqa: E402

HOST = "h"
KINDS = ("shell", "claude", "codex", "opencode", "opencode-attach")
TARGETS_MIB = {"shell": 4.0, "claude": 6.0, "codex": 8.0, "opencode": 8.0, "opencode-attach": 8.0}
CODEX_STANDIN = REPO / "tests" / "drivers" / "codex" / "standin_app_server.py"
OPENCODE_STANDIN = REPO / "tests" / "drivers" / "opencode" / "standin_opencode.py"


def pss_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def breakdown(pid: int) -> str:
    """Shared and private kB of one process (where its PSS comes from)."""
    fields = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                words = line.split()
                if len(words) == 3 and words[2] == "kB":
                    fields[words[0].rstrip(":")] = int(words[1])
    except OSError:
        return "gone"
    return " ".join(f"{name}={fields.get(name, 0)}kB" for name in
                    ("Rss", "Pss", "Shared_Clean", "Shared_Dirty", "Private_Clean", "Private_Dirty"))


def children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(word) for word in listing.read().split()]
    except OSError:
        pass
    return found


def tree(pid: int) -> list[int]:
    pending, seen = [pid], []
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.append(current)
        pending += children(current)
    return seen


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


PANE_ANCHOR = "st2-session-anchor"   # st2.drivers.session_handoff.ANCHOR_NAME


def forked_wrapper(pid: int) -> int | None:
    """The forked session wrapper a pane anchor holds the pane for (``sh -c <anchor>
    st2-session-anchor <wrapper pid> …``, st2.drivers.session_handoff), or None when ``pid`` is
    no anchor. That wrapper is the seat host's child, not in the pane's process tree."""
    words = cmdline(pid)
    if len(words) > 4 and words[1] == "-c" and words[3] == PANE_ANCHOR and words[4].isdigit():
        return int(words[4])
    return None


def is_st2(pid: int) -> bool:
    """An st2 process: ``python -m st2 …`` or the ``st2`` entry point (a fork server's children
    carry its command line), a session wrapper exec'd into the slim anchor, or a native seat's
    pane anchor."""
    words = cmdline(pid)
    if not words or not words[0]:
        return False
    if os.path.basename(words[0]) == "st2" or words[1:3] == ["-m", "st2"]:
        return True
    if len(words) > 1 and os.path.basename(words[1]) == "st2":  # python …/bin/st2
        return True
    return is_anchor(pid) or forked_wrapper(pid) is not None


def is_anchor(pid: int) -> bool:
    """A Claude wrapper while it is the slim anchor (``st2/drivers/anchor.py``)."""
    words = cmdline(pid)
    return words[1:4] == ["-S", "-I", "-c"] and len(words) > 5 and words[5].endswith("/st2/drivers/anchor.py")


def inotify_instances(pid: int) -> int:
    count = 0
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{name}") == "anon_inode:inotify":
                    count += 1
            except OSError:
                pass
    except OSError:
        pass
    return count


def anchor_pss_mib() -> float:
    """PSS of one bare ``python3 -S`` (the anchor), the mean over 5 running at once."""
    processes = [subprocess.Popen([sys.executable, "-S", "-c", "import time; time.sleep(60)"]) for _ in range(5)]
    try:
        time.sleep(1.5)
        values = [pss_kib(process.pid) or 0 for process in processes]
    finally:
        for process in processes:
            process.kill()
            process.wait()
    return sum(values) / len(values) / 1024


def standin_script(directory: Path, name: str, standin: Path) -> Path:
    """A per-seat executable: the stand-in server with its own state directory."""
    state = directory / "standin"
    state.mkdir(parents=True, exist_ok=True)
    script = directory / name
    script.write_text(f"#!/bin/sh\nSTANDIN_DIR={state} exec {sys.executable} {standin} \"$@\"\n")
    script.chmod(0o755)
    return script


def declaration(kind: str, identity: str, workspace: Path) -> str:
    if kind == "shell":
        body = '    argv "sh" "-c" "exec sleep 7200"\n    ding'
    elif kind == "claude":
        # The wrapper appends Claude's options (the seat guide's --append-system-prompt …); the
        # stand-in takes them as sh's positional parameters and becomes the sleep.
        body = '    ding\n    claude {\n        executable "sh"\n        args "-c" "exec sleep 7200" "claude"\n    }'
    elif kind == "codex":
        script = standin_script(workspace, "codex", CODEX_STANDIN)
        body = f'    codex {{\n        executable "{script}"\n    }}'
    else:   # opencode: view "transcript", or the default view (opencode's TUI, its stand-in here)
        script = standin_script(workspace, "opencode", OPENCODE_STANDIN)
        view = '        view "transcript"\n' if kind == "opencode" else ""
        body = f'    opencode {{\n        executable "{script}"\n{view}    }}'
    return f'agent "{identity}" {{\n    workspace "{workspace}"\n{body}\n}}\n'


def make_catalog(base: Path, seats: int, kinds: tuple[str, ...]) -> dict[str, str]:
    """Write the catalog; return identity -> kind."""
    catalog = base / "c"
    plan = {}
    for index in range(seats):
        kind = kinds[index % len(kinds)]
        identity = f"{kind[:2]}{index:03d}"
        workspace = base / "w" / identity
        workspace.mkdir(parents=True)
        seat = catalog / "agents" / HOST / identity
        seat.mkdir(parents=True)
        (seat / "agent.kdl").write_text(declaration(kind, identity, workspace))
        plan[identity] = kind
    return plan


def expected_tasks(plan: dict[str, str]) -> set[str]:
    ids = set()
    for identity, kind in plan.items():
        ids.add(f"{HOST}.{identity}")
        if kind in ("shell", "claude"):
            ids.add(f"{HOST}.{identity}.ding")
    return ids


def live_records(scope: RuntimeScope) -> dict:
    from st2.process.identity import liveness, Liveness

    alive = {}
    for runtime_id in launch_record.recorded_ids(scope):
        try:
            record = launch_record.read(scope, runtime_id)
        except launch_record.MalformedRecord:
            continue
        if record is not None and liveness(record.identity) == Liveness.ALIVE:
            alive[runtime_id] = record
    return alive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=100)
    parser.add_argument("--mix", default=",".join(KINDS), help="comma list of seat kinds")
    parser.add_argument("--settle", type=float, default=10.0, help="seconds to let the fleet idle before measuring")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for every task")
    parser.add_argument("--smoke", action="store_true", help="the same path over one seat of each kind")
    arguments = parser.parse_args()
    idle_window = IDLE_WINDOW_SECONDS
    if arguments.smoke:
        arguments.seats, arguments.mix, arguments.settle, idle_window = len(KINDS), ",".join(KINDS), 1.0, 1.0
    kinds = tuple(kind for kind in arguments.mix.split(",") if kind)
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown or not kinds:
        parser.error(f"--mix takes {', '.join(KINDS)}")

    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2fm-"))
    plan = make_catalog(base, arguments.seats, kinds)
    fleet = Up(base)
    try:
        up_seconds = fleet.wait_live(expected_tasks(plan), arguments.timeout)
        if up_seconds is None:
            return 1
        time.sleep(arguments.settle)
        # A seat that crash-loops still shows a live record between its restarts: measuring it
        # would report a fleet that is not running.
        restarts = [line for line in (base / "up.log").read_text().splitlines() if "st2 up: restarted" in line]
        if restarts:
            print(f"a task restarted before the measurement ({restarts[0]}); see {base / 'up.log'}")
            return 1
        alive = live_records(fleet.scope)
        report = measure(plan, alive, fleet.supervisor.pid, fleet.state, idle_window)
        report["up_seconds"] = up_seconds
        report["anchored"], report["kept"] = anchored_and_kept(alive, fleet.scope)
        status = print_report(report, anchor_pss_mib(), arguments.seats)   # before the slow teardown
    finally:
        fleet.close()
    return status


class Up:
    """A real ``st2 up --host h`` over the catalog :func:`make_catalog` wrote under ``base``:
    setsid transport, a private ``XDG_STATE_HOME`` (``base/s``), the caller's ``extra``
    environment on top, its output in ``base/up.log``. :meth:`close` stops it, runs ``st2
    down`` and kills whatever the run left (:func:`teardown`), then removes ``base``."""

    def __init__(self, base: Path, extra: dict[str, str] | None = None, interval: str = "30s") -> None:
        self.base = base
        self.state = base / "s"
        environment = {key: value for key, value in os.environ.items()
                       if not key.startswith(("ST_", "CATALOG", "TMUX", "NOTIFY_SOCKET"))}
        environment.update(CATALOG=str(base / "c"), XDG_STATE_HOME=str(self.state), ST2_TRANSPORT="setsid",
                           PYTHONDONTWRITEBYTECODE="1", **(extra or {}))
        self.environment = environment
        self.scope = RuntimeScope(base / "c", HOST, state_dir=self.state / "st2")
        self.log = (base / "up.log").open("w")
        self.started = time.monotonic()
        self.supervisor = subprocess.Popen([sys.executable, "-m", "st2", "up", "--host", HOST, "--interval", interval],
                                           stdout=self.log, stderr=subprocess.STDOUT, env=environment, cwd=REPO,
                                           start_new_session=True)

    def wait_live(self, wanted: set[str], timeout: float) -> float | None:
        """Seconds until every ``wanted`` task has a live launch record; None (said) when the
        supervisor ended or ``timeout`` passed first."""
        while True:
            alive = live_records(self.scope)
            if wanted <= set(alive):
                return time.monotonic() - self.started
            if self.supervisor.poll() is not None or time.monotonic() - self.started > timeout:
                print(f"only {len(set(alive) & wanted)} of {len(wanted)} tasks came up; see {self.base / 'up.log'}")
                return None
            time.sleep(1.0)

    def close(self) -> None:
        self.supervisor.send_signal(signal.SIGTERM)
        try:
            self.supervisor.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.supervisor.kill()
        self.log.close()
        subprocess.run([sys.executable, "-m", "st2", "down", "--host", HOST], env=self.environment,
                       cwd=REPO, capture_output=True, timeout=600)
        teardown(self.scope, self.state)
        shutil.rmtree(self.base, ignore_errors=True)


def run_state_processes(state: Path) -> list[int]:
    """Every st2 process whose environment names this run's state directory."""
    needle = f"XDG_STATE_HOME={state}".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and is_st2(int(name)):
            found.append(int(name))
    return found


def measure(plan: dict[str, str], alive: dict, supervisor: int, state: Path,
            idle_window: float = 5.0) -> dict:
    per_kind: dict[str, list[float]] = {kind: [] for kind in KINDS}
    dings, wrappers, tmux_servers, anchors = [], [], [], []
    counted: set[int] = set()
    tuis = 0   # opencode-attach panes whose anchor runs the (stand-in) TUI: the view is really there
    for identity, kind in plan.items():
        seat_kib = 0
        agent = alive.get(f"{HOST}.{identity}")
        if agent is not None:
            if agent.server_pid:
                tmux_servers.append(pss_kib(agent.server_pid) or 0)
            wrapper = forked_wrapper(agent.pid)
            if kind == "opencode-attach" and any("attach" in cmdline(pid) for pid in children(agent.pid)):
                tuis += 1
            processes = tree(agent.pid) + (tree(wrapper) if wrapper is not None else [])
            for pid in processes:
                if is_st2(pid):
                    value = pss_kib(pid) or 0
                    seat_kib += value
                    counted.add(pid)
                    if pid == (wrapper or agent.pid):
                        wrappers.append(value)
                    elif pid == agent.pid:
                        anchors.append(value)
        ding = alive.get(f"{HOST}.{identity}.ding")
        if ding is not None:
            for pid in tree(ding.pid):
                if is_st2(pid):
                    value = pss_kib(pid) or 0
                    seat_kib += value
                    counted.add(pid)
                    if pid == ding.pid:
                        dings.append(value)
        per_kind[kind].append(seat_kib)
    everything = run_state_processes(state)
    shared = [pid for pid in everything if pid != supervisor and pid not in counted]
    shared_kib = sum(pss_kib(pid) or 0 for pid in shared)
    roles = host_roles(state)
    for pid in shared:
        print(f"host-level st2 process {pid}{roles.get(pid, '')}: {' '.join(cmdline(pid))[:100]}")
        print(f"  {breakdown(pid)}")
    for name, values in (("DING notifier", dings), ("session wrapper", wrappers)):
        pid = next((alive[rid].pid for rid in alive if (rid.endswith(".ding")) == (name == "DING notifier")
                    and is_st2(alive[rid].pid)), None)
        if pid is not None:
            pid = forked_wrapper(pid) or pid
            print(f"one {name} (pid {pid}): {breakdown(pid)}")
    instances = sum(inotify_instances(pid) for pid in everything)
    service_pid, served = ding_service(state)
    ding_pids = {record.pid for rid, record in alive.items() if rid.endswith(".ding")}
    idle = idle_cpu_percent([service_pid] if service_pid else [], sorted(ding_pids), window=idle_window)
    print(f"idle CPU over {idle_window:g} s (percent of one core): DING service {idle[0]:.1f}, "
          f"DING tasks {idle[1]:.1f} together")
    self_serving = len(ding_pids - served)
    print(f"DING service: pid {service_pid} ({threads_and_descriptors(service_pid)}), {len(served & ding_pids)} of "
          f"{len(ding_pids)} DING tasks served; {self_serving} serve their seat themselves")
    return {
        "service": (pss_kib(service_pid) or 0) if service_pid else 0, "self_serving": self_serving,
        "per_kind": per_kind, "dings": dings, "wrappers": wrappers, "tmux": tmux_servers, "anchors": anchors,
        "supervisor": pss_kib(supervisor) or 0, "shared_kib": shared_kib, "shared_count": len(shared),
        "instances": instances, "limit": read_limit(), "tuis": tuis,
    }


def ding_service(state: Path) -> tuple[int | None, set[int]]:
    """The DING service's PID and the stub PIDs it serves (None and nothing when none answers)."""
    from st2.runtime import layout
    from st2.seathost import wire

    for path in state.glob(f"st2/scopes/*/{HOST}/{layout.DING_SERVICE_SOCKET}"):
        try:
            hello = wire.request(path, {"op": "hello"}, timeout=5.0)
        except OSError:
            continue
        return hello.get("pid"), {row.get("stub") for row in hello.get("serving") or ()}
    return None, set()


def host_roles(state: Path) -> dict[int, str]:
    """`` (seat host)`` and `` (zygote)`` by PID, from the seat host's ``hello``: the zygote
    (st2.seathost.zygote) carries the host's command line and environment, so it is counted
    with the host-level processes like the host itself."""
    from st2.runtime import layout
    from st2.seathost import wire

    for path in state.glob(f"st2/scopes/*/{HOST}/{layout.SEAT_HOST_SOCKET}"):
        try:
            hello = wire.request(path, {"op": "hello"}, timeout=5.0)
        except OSError:
            continue
        return {pid: f" ({role})" for pid, role in ((hello.get("pid"), "seat host"), (hello.get("zygote"), "zygote"))
                if isinstance(pid, int)}
    return {}


IDLE_WINDOW_SECONDS = 5.0


def cpu_ns(pid: int) -> int:
    """Nanoseconds on CPU of every thread of ``pid`` (``schedstat``: per-process tick counts are
    too coarse for a notifier that runs a fraction of a millisecond per pass)."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
            except (OSError, IndexError, ValueError):
                pass
    except OSError:
        pass
    return total


def idle_cpu_percent(*groups: list[int], window: float = IDLE_WINDOW_SECONDS) -> list[float]:
    """CPU each group of processes used over ``window`` seconds with no mail moving."""
    before = [sum(cpu_ns(pid) for pid in group) for group in groups]
    time.sleep(window)
    after = [sum(cpu_ns(pid) for pid in group) for group in groups]
    return [100.0 * (end - start) / 1e9 / window for start, end in zip(before, after)]


def threads_and_descriptors(pid: int | None) -> str:
    if pid is None:
        return "none"
    try:
        threads = next(line.split()[1] for line in open(f"/proc/{pid}/status") if line.startswith("Threads:"))
        return f"{threads} threads, {len(os.listdir(f'/proc/{pid}/fd'))} descriptors"
    except (OSError, StopIteration):
        return "gone"


def read_limit() -> str:
    try:
        return Path("/proc/sys/fs/inotify/max_user_instances").read_text().strip()
    except OSError:
        return "unknown"


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def anchored_and_kept(alive: dict, scope: RuntimeScope) -> tuple[int, int]:
    """How many pane processes are the slim anchor, and how many sessions the seat host keeps."""
    from st2.seathost import wire

    anchored = sum(1 for record in alive.values() if is_anchor(record.pid))
    try:
        kept = len(wire.request(wire.socket_path(scope.directory), {"op": "hello"}).get("kept", []))
    except OSError:
        kept = 0
    return anchored, kept


def print_report(report: dict, anchor: float, seats: int) -> int:
    """Print the figures, their ratios to the anchor and the RESULT line (flushed: the teardown
    that follows takes minutes at full size)."""
    mib = 1024.0
    shared_per_seat = report["shared_kib"] / mib / seats
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus; fleet up in {report['up_seconds']:.0f} s")
    print(f"anchor: bare python3 -S PSS {anchor:.2f} MiB")
    print(f"host-level st2 processes: {report['shared_count']}, {report['shared_kib'] / mib:.2f} MiB PSS "
          f"({shared_per_seat:.3f} MiB per seat, included below)")
    total = 0.0
    for kind in KINDS:
        values = report["per_kind"][kind]
        if not values:
            continue
        per_seat = mean(values) / mib + shared_per_seat
        total += sum(values) / mib
        verdict = "met" if per_seat <= TARGETS_MIB[kind] else "NOT met"
        print(f"{kind:9s} seats: {len(values):3d}  st2 PSS per seat {per_seat:6.2f} MiB  "
              f"({per_seat / anchor:.2f}x anchor; target <= {TARGETS_MIB[kind]:g} MiB: {verdict})")
    per_seat = (total + report["shared_kib"] / mib) / seats
    ding = mean(report["dings"]) / mib
    wrapper = mean(report["wrappers"]) / mib
    tmux = mean(report["tmux"]) / mib
    supervisor = report["supervisor"] / mib
    for name, value in (("per seat (all kinds)", per_seat), ("DING notifier", ding),
                        ("session wrapper", wrapper), ("tmux server (not counted)", tmux),
                        ("supervisor", supervisor), ("DING service (in the above)", report["service"] / mib)):
        print(f"{name:26s} {value:7.2f} MiB PSS  ({value / anchor:.2f}x anchor)")
    if report.get("anchored") or report.get("kept"):
        print(f"Claude wrappers that are the slim anchor: {report['anchored']}; sessions the seat host keeps: "
              f"{report['kept']}")
    if report["anchors"]:
        print(f"pane anchors (sh, st2.drivers.session_handoff): {len(report['anchors'])}, "
              f"{mean(report['anchors']) / mib:.2f} MiB PSS each (included per seat; the session wrapper "
              f"figure is the forked wrapper's own)")
    attach_seats = len(report["per_kind"].get("opencode-attach", []))
    if attach_seats:
        print(f"opencode-attach panes whose anchor runs the TUI: {report['tuis']} of {attach_seats}")
    print(f"inotify instances held by st2: {report['instances']} "
          f"(fs.inotify.max_user_instances {report['limit']})")
    print(f"RESULT pss_per_seat_mib={per_seat:.2f} ding_pss_mib={ding:.2f} wrapper_pss_mib={wrapper:.2f} "
          f"tmux_pss_mib={tmux:.2f} supervisor_pss_mib={supervisor:.2f} "
          f"inotify_instances={report['instances']} seats={seats} "
          f"ding_service_pss_mib={report['service'] / mib:.2f} self_serving={report['self_serving']} "
          f"ratio_anchor={per_seat / anchor:.2f}", flush=True)
    return 0


def teardown(scope: RuntimeScope, state: Path) -> None:
    """Kill whatever this run left (by recorded identity and socket only)."""
    from st2.supervisor.backends.process_group import kill_group

    for runtime_id in launch_record.recorded_ids(scope):
        try:
            record = launch_record.read(scope, runtime_id)
        except launch_record.MalformedRecord:
            continue
        if record is None:
            continue
        if record.socket:
            subprocess.run(["tmux", "-S", record.socket, "kill-server"], capture_output=True)
        kill_group(record.identity, grace_seconds=1)
    for pid in run_state_processes(state):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


if __name__ == "__main__":
    raise SystemExit(main())
