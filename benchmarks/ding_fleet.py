"""DING delivery latency at fleet size: from a message's atomic rename into a seat's inbox to its
notice on that seat's tmux screen, through the one DING service (:mod:`st2.ding.service`).

Runs the real ``st2 up`` over N shell seats with ``ding`` (default 100; ``--seats 627`` for the
full size), built and torn down by ``benchmarks/fleet_memory.py``'s helpers (setsid transport, a
private ``XDG_STATE_HOME``; each seat's pane runs ``sleep``, whose terminal echoes what DING
pastes, so the plain line grammar delivers there). It waits until every DING task is live and
served by the service (``self_serving=0``: every stub's row in the service's ``hello``, each with
a live shared watch) and every sampled seat's notifier has taken its start-up backlog (its
ownership record exists), then posts mail the way a peer does (temp file renamed into the
inbox:

- one at a time, to ``--singles`` seats (default 60, spread over the fleet, each receiving its
  first mail, so a served seat's tmux control client is opened cold): the next message is posted
  once the previous notice is on its screen; 60 samples keep the run-to-run spread of the p50
  well inside the ratio's margin, where 20 let it move by a third;
- bursts: one message to each of ``--sample`` of those seats (default 20, spread over them) at
  once, each timed from its own rename; ``--bursts`` of them (default 3, 2 s apart), each to its
  own seats where the singles allow (60 singles: three disjoint sets of 20), so the burst figures
  are p50s over 60 samples: one burst of 20 let the burst ratio move from 0.37 to 0.76 between
  runs of one machine.

"On the screen" is screen-verified: a read-only, size-ignoring tmux control client on each
sampled seat (``tmux -C attach -f ignore-size,read-only``) reports the pane's output as it
arrives, so no seat is polled by spawning clients in a loop (a capture costs ~2 ms of CPU; 20
seats polled every 20 ms would take a core from the fleet being measured); when the notice's
text has arrived, one ``capture-pane -p -J`` must show it — that capture's time is the figure
(polled until it does). The time the echoed Return follows the notice (DING's verified submit)
is reported beside it. Afterwards each seat's pane history must hold each of its notices
exactly once.

The anchor is the same fleet (``--anchor-seats``, default the same N) with the service absent:
``ST2_DING_SERVICE=off`` makes every forked DING task serve its seat itself (a whole notifier
per seat), the same measure. ``ratio`` is the service's one-at-a-time p50 over the anchor's;
``burst_ratio`` the service's burst-done p50 (rename to the Return echoed, the delivery done)
over the anchor's. ``--smoke`` runs the same code over 6 seats, 3 sent one at a time and in the burst, anchor the same, in
well under a minute on a quiet machine.

Last line: ``RESULT ding_p50_ms=… ding_p95_ms=… ding_max_ms=… burst_p95_ms=… anchor_p50_ms=…
ratio=… seats=… self_serving=… burst_done_p50_ms=… anchor_burst_done_p50_ms=… burst_ratio=…``.
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "tests" / "ding"))
sys.path.insert(0, str(REPO / "tests"))

from fleet_memory import HOST, Up, cpu_ns, ding_service, expected_tasks, live_records, make_catalog, \
    threads_and_descriptors  # noqa: E402
from ding_support import typed_notice, write_message  # noqa: E402
from st2.runtime.tmux import SESSION_NAME, client_argv  # noqa: E402

SENDER = "h.planner"          # write_message's default sender
SCREEN_TIMEOUT_SECONDS = 60.0


def compact(text: str) -> str:
    return "".join(character for character in text if not character.isspace())


def unescape(text: str) -> str:
    """A control-mode ``%output`` payload: octal escapes (``\\ooo``) for control characters and
    the backslash."""
    out, index = [], 0
    while index < len(text):
        if text[index] == "\\" and text[index + 1:index + 4].isdigit():
            out.append(chr(int(text[index + 1:index + 4], 8)))
            index += 4
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


class Screen:
    """One sampled seat's pane: a control client streaming its output, and captures."""

    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.output = ""
        self.guard = threading.Condition()
        self.client = subprocess.Popen(client_argv(socket, "-C", "attach-session", "-f", "ignore-size,read-only",
                                                   "-t", SESSION_NAME),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for raw in self.client.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith("%output "):
                payload = unescape(line.split(" ", 2)[2] if line.count(" ") >= 2 else "")
                with self.guard:
                    self.output += payload
                    self.guard.notify_all()

    def mark(self) -> int:
        with self.guard:
            return len(self.output)

    def wait_output(self, text: str, start: int, deadline: float) -> bool:
        with self.guard:
            while text not in self.output[start:]:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.guard.wait(left)
            return True

    def capture(self, history: bool = False) -> str:
        words = ["capture-pane", "-p", "-J", "-t", SESSION_NAME] + (["-S", "-"] if history else [])
        result = subprocess.run(client_argv(self.socket, *words), capture_output=True, text=True, timeout=10)
        return result.stdout

    def close(self) -> None:
        try:
            self.client.stdin.close()
        except OSError:
            pass
        try:
            self.client.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.client.kill()
            self.client.wait()


def seen(screen: Screen, notice: str, written: float, start: int) -> tuple[float, float]:
    """Milliseconds from ``written`` until a capture shows ``notice``, and until its Return echoed
    (``nan`` when it never did). Raise TimeoutError when the notice never reached the screen."""
    deadline = written + SCREEN_TIMEOUT_SECONDS
    if not screen.wait_output(notice, start, deadline):
        raise TimeoutError(f"the notice {notice!r} never reached {screen.socket}")
    wanted = compact(notice)
    while wanted not in compact(screen.capture()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{screen.socket}: the notice's output arrived but no capture shows it")
        select.select([], [], [], 0.002)
    on_screen = (time.monotonic() - written) * 1000
    submitted = float("nan")
    if screen.wait_output(notice + "\r\n", start, deadline):
        submitted = (time.monotonic() - written) * 1000
    return on_screen, submitted


def post(seat: Path, subject: str) -> tuple[str, float]:
    """Post one message; its notice as typed and the time just after its rename."""
    name = write_message(seat, subject)
    return typed_notice(name, subject, SENDER), time.monotonic()


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` percentile of the finite values (a Return never echoed is ``nan``);
    ``nan`` when there are none."""
    ordered = sorted(value for value in values if value == value)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def sample_of(plan: dict[str, str], count: int) -> list[str]:
    identities = sorted(plan)
    step = max(1, len(identities) // count)
    return identities[::step][:count]


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.5)


def fleet_run(seats: int, singles: int, sample: int, bursts: int, service: bool, timeout: float) -> dict:
    """One fleet, measured: the latencies and what served it."""
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2df-"))
    plan = make_catalog(base, seats, ("shell",))
    for identity in plan:
        (base / "c" / "agents" / HOST / identity / "resources" / "inbox").mkdir(parents=True)
    fleet = Up(base, None if service else {"ST2_DING_SERVICE": "off"})
    screens: dict[str, Screen] = {}
    try:
        up_seconds = fleet.wait_live(expected_tasks(plan), timeout)
        if up_seconds is None:
            raise SystemExit(1)
        alive = live_records(fleet.scope)
        dings = {record.pid for runtime_id, record in alive.items() if runtime_id.endswith(".ding")}

        def all_served() -> bool:
            pid, served = ding_service(fleet.state)
            return pid is not None and dings <= served

        if service:
            wait_for(all_served, timeout, "every DING task served by the DING service")
            watching = lambda: all(row.get("watch") for row in service_rows(fleet.state))  # noqa: E731
            wait_for(watching, timeout, "every served seat's shared watch")
        single_seats = sample_of(plan, singles)
        step = max(1, len(single_seats) // sample)
        burst_sets = [single_seats[offset::step][:sample] for offset in range(min(bursts, step))]
        burst_sets += [burst_sets[index % len(burst_sets)] for index in range(len(burst_sets), bursts)]
        ownership = fleet.scope.directory / "ding"
        wait_for(lambda: all((ownership / f"{HOST}.{identity}.json").exists() for identity in single_seats), timeout,
                 "every sampled seat's notifier to take its backlog")
        service_pid, served = ding_service(fleet.state)
        self_serving = len(dings - served)
        for identity in single_seats:
            screens[identity] = Screen(alive[f"{HOST}.{identity}"].socket)
        time.sleep(1.0)   # the control clients attached
        seat = lambda identity: base / "c" / "agents" / HOST / identity  # noqa: E731
        notices: dict[str, list[str]] = {identity: [] for identity in single_seats}
        single, single_submit = [], []
        for index, identity in enumerate(single_seats):
            start = screens[identity].mark()
            notice, written = post(seat(identity), f"single {index} for {identity}")
            notices[identity].append(notice)
            on_screen, submitted = seen(screens[identity], notice, written, start)
            single.append(on_screen)
            single_submit.append(submitted)
        burst, burst_submit, burst_cpu, burst_wall = [], [], 0.0, 0.0
        for chosen in burst_sets:
            time.sleep(2.0)   # every earlier Return and receipt done before the burst
            cpu, wall = burst_once(chosen, screens, notices, seat, service_pid, alive, burst, burst_submit)
            burst_cpu, burst_wall = burst_cpu + cpu, burst_wall + wall
        time.sleep(2.0)
        duplicates = {identity: [notice for notice in notices[identity]
                                 if compact(screens[identity].capture(history=True)).count(compact(notice)) != 1]
                      for identity in single_seats}
        duplicates = {identity: bad for identity, bad in duplicates.items() if bad}
        return {"single": single, "single_submit": single_submit, "burst": burst, "burst_submit": burst_submit,
                "self_serving": self_serving, "service_pid": service_pid, "up_seconds": up_seconds,
                "service_threads": threads_and_descriptors(service_pid) if service_pid else "none",
                "not_once": duplicates, "burst_cpu_ms": burst_cpu, "burst_wall_ms": burst_wall, "seats": seats, "sampled": len(burst_sets[0]),
                "bursts": len(burst_sets),
                "singles": len(single_seats)}
    finally:
        for screen in screens.values():
            screen.close()
        fleet.close()


def burst_once(chosen: list[str], screens: dict, notices: dict, seat, service_pid: int | None, alive: dict,
               burst: list[float], burst_submit: list[float]) -> tuple[float, float]:
    """Post one message to each of ``chosen`` at once and append each one's (on screen, Return
    echoed) times; return the CPU (ms) of what serves them and the wall time (ms) the burst took."""
    marks = {identity: screens[identity].mark() for identity in chosen}
    serving = ([service_pid, *children(service_pid)] if service_pid
               else [alive[f"{HOST}.{identity}.ding"].pid for identity in chosen])
    cpu_before, wall_before = sum(cpu_ns(pid) for pid in serving), time.monotonic()
    posted = {}
    for identity in chosen:
        posted[identity] = post(seat(identity), f"burst for {identity} {len(burst)}")
        notices[identity].append(posted[identity][0])
    results: dict[str, tuple[float, float]] = {}
    threads = [threading.Thread(target=lambda identity=identity: results.__setitem__(
        identity, seen(screens[identity], posted[identity][0], posted[identity][1], marks[identity])))
        for identity in chosen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cpu = (sum(cpu_ns(pid) for pid in serving) - cpu_before) / 1e6
    wall = (time.monotonic() - wall_before) * 1000
    missing = [identity for identity in chosen if identity not in results]
    if missing:
        raise TimeoutError(f"the burst's notices never reached {missing}")
    for identity in chosen:
        burst.append(results[identity][0])
        burst_submit.append(results[identity][1])
    return cpu, wall


def children(pid: int) -> list[int]:
    """The live children of ``pid`` (the DING service's spawn helper, whose CPU is the service's)."""
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                found += [int(child) for child in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return found


def service_rows(state: Path) -> list[dict]:
    from st2.runtime import layout
    from st2.seathost import wire

    for path in state.glob(f"st2/scopes/*/{HOST}/{layout.DING_SERVICE_SOCKET}"):
        try:
            return list(wire.request(path, {"op": "hello"}, timeout=5.0).get("serving") or ())
        except OSError:
            continue
    return []


def describe(name: str, run: dict) -> None:
    single, burst = run["single"], run["burst"]
    print(f"{name}: {run['seats']} seats up in {run['up_seconds']:.0f} s, {run['singles']} sent one at a time, "
          f"{run['bursts']} burst(s) of {run['sampled']}; "
          f"DING service pid {run['service_pid']} ({run['service_threads']}); self-serving DING tasks "
          f"{run['self_serving']}")
    for label, values, submits in (("one at a time", single, run["single_submit"]),
                                   ("bursts, all at once", burst, run["burst_submit"])):
        print(f"  {label:21s} rename -> on screen p50 {percentile(values, 0.5):7.1f} ms  p95 "
              f"{percentile(values, 0.95):7.1f} ms  max {max(values):7.1f} ms;  -> Return echoed p50 "
              f"{percentile(submits, 0.5):7.1f} ms  max {max(submits):7.1f} ms")
    print(f"  CPU of what serves the sampled seats (the DING service and its spawn helper, or their own notifiers) "
          f"during the bursts: "
          f"{run['burst_cpu_ms']:.0f} ms over {run['burst_wall_ms']:.0f} ms")
    if run["not_once"]:
        print(f"  NOT EXACTLY ONCE on screen: {run['not_once']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=100)
    parser.add_argument("--singles", type=int, default=60, help="seats sent one message each, one at a time")
    parser.add_argument("--sample", type=int, default=20, help="seats of the burst (spread over the singles')")
    parser.add_argument("--bursts", type=int, default=3, help="bursts, each to its own seats where the singles allow")
    parser.add_argument("--anchor-seats", type=int, default=None,
                        help="seats of the anchor fleet (the DING service absent); default --seats, 0 skips it")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for a fleet")
    parser.add_argument("--smoke", action="store_true",
                        help="the same measure, tiny: 6 seats, 3 singles and a burst of 3, an anchor of 6 (seconds)")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.seats, arguments.singles, arguments.sample, arguments.anchor_seats = 6, 3, 3, 6
        arguments.bursts = 1
        arguments.timeout = min(arguments.timeout, 300.0)
    anchor_seats = arguments.seats if arguments.anchor_seats is None else arguments.anchor_seats
    singles = min(arguments.singles, arguments.seats)
    sample = min(arguments.sample, singles)

    with_service = fleet_run(arguments.seats, singles, sample, arguments.bursts, True, arguments.timeout)
    describe("with the DING service", with_service)
    anchor = None
    if anchor_seats:
        anchor = fleet_run(anchor_seats, min(singles, anchor_seats), min(sample, anchor_seats), arguments.bursts,
                           False, arguments.timeout)
        describe("anchor, no DING service (ST2_DING_SERVICE=off: each task serves its seat)", anchor)
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    single, burst = with_service["single"], with_service["burst"]
    anchor_p50 = percentile(anchor["single"], 0.5) if anchor else float("nan")
    ratio = percentile(single, 0.5) / anchor_p50 if anchor else float("nan")
    burst_done = percentile(with_service["burst_submit"], 0.5)
    anchor_burst_done = percentile(anchor["burst_submit"], 0.5) if anchor else float("nan")
    failed = bool(with_service["not_once"] or (anchor and anchor["not_once"]))
    print(f"RESULT ding_p50_ms={percentile(single, 0.5):.1f} ding_p95_ms={percentile(single, 0.95):.1f} "
          f"ding_max_ms={max(single):.1f} burst_p95_ms={percentile(burst, 0.95):.1f} anchor_p50_ms={anchor_p50:.1f} "
          f"ratio={ratio:.2f} seats={arguments.seats} self_serving={with_service['self_serving']} "
          f"burst_done_p50_ms={burst_done:.1f} anchor_burst_done_p50_ms={anchor_burst_done:.1f} "
          f"burst_ratio={burst_done / anchor_burst_done:.2f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
