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

"On the screen" is when the notice's output reaches a read-only, size-ignoring tmux control
client on the sampled seat (``tmux -C attach -f ignore-size,read-only``): tmux forwards a pane's
output to its control clients in the same turn of its event loop that parses it into the pane's
grid, so any command sent once it has arrived reads a grid that holds it; no seat is polled by
spawning clients in a loop (a
capture costs ~2 ms of CPU; 20 seats polled every 20 ms would take a core from the fleet being
measured). One ``capture-pane -p -J`` spawned right after must then show the notice (polled until
it does; the run prints how many it took, one in every run so far); that capture's time is
reported beside the figure (``captured_p50_ms``), as the figure itself was until the runs
interleaved: it adds the benchmark's own client spawn (~3 ms) to both sides of a ratio. The
time the echoed Return follows the notice (DING's verified submit) is reported too. Afterwards
each seat's pane history must hold each of its notices exactly once.

The anchor is the same fleet (``--anchor-seats``, default the same N) with the service absent:
``ST2_DING_SERVICE=off`` makes every forked DING task serve its seat itself (a whole notifier
per seat), the same measure. Both fleets are up at once and measured turn about (single ``i`` of
one, then of the other, the first of each pair alternating; then the bursts the same way), so
both sides of a ratio meet the same machine: measured one fleet after the other, the anchor's
single p50 moved from 17.6 to 24.9 ms between runs of one quiet machine while the service's
moved as much, and one run's ratio said little. ``ratio`` is the service's one-at-a-time p50 over the anchor's;
``burst_ratio`` the service's burst-done p50 (rename to the Return echoed, the delivery done)
over the anchor's. ``--smoke`` runs the same code over 6 seats, 3 sent one at a time and in the burst, anchor the same, in
well under a minute on a quiet machine.

Last line: ``RESULT ding_p50_ms=… ding_p95_ms=… ding_max_ms=… burst_p95_ms=… anchor_p50_ms=…
ratio=… seats=… self_serving=… burst_done_p50_ms=… anchor_burst_done_p50_ms=… burst_ratio=…
captured_p50_ms=… anchor_captured_p50_ms=… captured_ratio=…``.
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


def seen(screen: Screen, notice: str, written: float, start: int) -> tuple[float, float, float, int]:
    """Milliseconds from ``written`` until the notice's output reached the screen's client, until
    a capture showed it, and until its Return echoed (``nan`` when it never did), and how many
    captures that took. Raise TimeoutError when the notice never reached the screen."""
    deadline = written + SCREEN_TIMEOUT_SECONDS
    if not screen.wait_output(notice, start, deadline):
        raise TimeoutError(f"the notice {notice!r} never reached {screen.socket}")
    arrived = (time.monotonic() - written) * 1000
    wanted = compact(notice)
    captures = 1
    while wanted not in compact(screen.capture()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{screen.socket}: the notice's output arrived but no capture shows it")
        select.select([], [], [], 0.002)
        captures += 1
    captured = (time.monotonic() - written) * 1000
    submitted = float("nan")
    if screen.wait_output(notice + "\r\n", start, deadline):
        submitted = (time.monotonic() - written) * 1000
    return arrived, captured, submitted, captures


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


class Fleet:
    """One fleet brought up and made ready to measure (:meth:`single`, :meth:`burst`), what it
    measured, and its teardown (:meth:`close`)."""

    def __init__(self, seats: int, singles: int, sample: int, bursts: int, service: bool, timeout: float) -> None:
        self.base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2df-"))
        plan = make_catalog(self.base, seats, ("shell",))
        for identity in plan:
            (self.seat(identity) / "resources" / "inbox").mkdir(parents=True)
        self.fleet = Up(self.base, None if service else {"ST2_DING_SERVICE": "off"})
        self.screens: dict[str, Screen] = {}
        self.seats, self.service = seats, service
        self.single_ms: list[float] = []
        self.single_submit: list[float] = []
        self.single_captured: list[float] = []
        self.captures: list[int] = []
        self.burst_ms: list[float] = []
        self.burst_submit: list[float] = []
        self.burst_cpu = self.burst_wall = 0.0
        try:
            self._ready(plan, singles, sample, bursts, timeout)
        except BaseException:
            self.close()
            raise

    def seat(self, identity: str) -> Path:
        return self.base / "c" / "agents" / HOST / identity

    def _ready(self, plan: dict[str, str], singles: int, sample: int, bursts: int, timeout: float) -> None:
        fleet = self.fleet
        up_seconds = fleet.wait_live(expected_tasks(plan), timeout)
        if up_seconds is None:
            raise SystemExit(1)
        self.up_seconds = up_seconds
        self.alive = live_records(fleet.scope)
        dings = {record.pid for runtime_id, record in self.alive.items() if runtime_id.endswith(".ding")}

        def all_served() -> bool:
            pid, served = ding_service(fleet.state)
            return pid is not None and dings <= served

        if self.service:
            wait_for(all_served, timeout, "every DING task served by the DING service")
            watching = lambda: all(row.get("watch") for row in service_rows(fleet.state))  # noqa: E731
            wait_for(watching, timeout, "every served seat's shared watch")
        self.single_seats = sample_of(plan, singles)
        step = max(1, len(self.single_seats) // sample)
        burst_sets = [self.single_seats[offset::step][:sample] for offset in range(min(bursts, step))]
        self.burst_sets = burst_sets + [burst_sets[index % len(burst_sets)]
                                        for index in range(len(burst_sets), bursts)]
        ownership = fleet.scope.directory / "ding"
        wait_for(lambda: all((ownership / f"{HOST}.{identity}.json").exists() for identity in self.single_seats),
                 timeout, "every sampled seat's notifier to take its backlog")
        self.service_pid, served = ding_service(fleet.state)
        self.self_serving = len(dings - served)
        self.service_threads = threads_and_descriptors(self.service_pid) if self.service_pid else "none"
        for identity in self.single_seats:
            self.screens[identity] = Screen(self.alive[f"{HOST}.{identity}"].socket)
        self.notices: dict[str, list[str]] = {identity: [] for identity in self.single_seats}

    def single(self, index: int) -> None:
        """Post the ``index``-th single and wait until its notice is on the screen."""
        identity = self.single_seats[index]
        start = self.screens[identity].mark()
        notice, written = post(self.seat(identity), f"single {index} for {identity}")
        self.notices[identity].append(notice)
        arrived, captured, submitted, captures = seen(self.screens[identity], notice, written, start)
        self.single_ms.append(arrived)
        self.single_captured.append(captured)
        self.captures.append(captures)
        self.single_submit.append(submitted)

    def burst(self, index: int) -> None:
        serving = ([self.service_pid, *children(self.service_pid)] if self.service_pid
                   else [self.alive[f"{HOST}.{identity}.ding"].pid for identity in self.burst_sets[index]])
        cpu, wall = burst_once(self.burst_sets[index], self.screens, self.notices, self.seat, serving,
                               self.burst_ms, self.burst_submit)
        self.burst_cpu, self.burst_wall = self.burst_cpu + cpu, self.burst_wall + wall

    def not_once(self) -> dict[str, list[str]]:
        """Each sampled seat's notices its pane history does not hold exactly once."""
        duplicates = {identity: [notice for notice in self.notices[identity]
                                 if compact(self.screens[identity].capture(history=True)).count(compact(notice)) != 1]
                      for identity in self.single_seats}
        return {identity: bad for identity, bad in duplicates.items() if bad}

    def close(self) -> None:
        for screen in self.screens.values():
            screen.close()
        self.fleet.close()


def burst_once(chosen: list[str], screens: dict, notices: dict, seat, serving: list[int],
               burst: list[float], burst_submit: list[float]) -> tuple[float, float]:
    """Post one message to each of ``chosen`` at once and append each one's (on screen, Return
    echoed) times; return the CPU (ms) of ``serving`` (the processes that serve them) and the
    wall time (ms) the burst took."""
    marks = {identity: screens[identity].mark() for identity in chosen}
    cpu_before, wall_before = sum(cpu_ns(pid) for pid in serving), time.monotonic()
    posted = {}
    for identity in chosen:
        posted[identity] = post(seat(identity), f"burst for {identity} {len(burst)}")
        notices[identity].append(posted[identity][0])
    results: dict[str, tuple[float, float, float, int]] = {}
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
        burst_submit.append(results[identity][2])
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


def describe(name: str, run: Fleet, duplicates: dict) -> None:
    print(f"{name}: {run.seats} seats up in {run.up_seconds:.0f} s, {len(run.single_ms)} sent one at a time, "
          f"{len(run.burst_sets)} burst(s) of {len(run.burst_sets[0])}; "
          f"DING service pid {run.service_pid} ({run.service_threads}); self-serving DING tasks "
          f"{run.self_serving}")
    for label, values, submits in (("one at a time", run.single_ms, run.single_submit),
                                   ("bursts, all at once", run.burst_ms, run.burst_submit)):
        print(f"  {label:21s} rename -> on screen p50 {percentile(values, 0.5):7.1f} ms  p95 "
              f"{percentile(values, 0.95):7.1f} ms  max {max(values):7.1f} ms;  -> Return echoed p50 "
              f"{percentile(submits, 0.5):7.1f} ms  max {max(submits):7.1f} ms")
    print(f"  one at a time, rename -> a capture shows it p50 {percentile(run.single_captured, 0.5):7.1f} ms "
          f"(captures per notice: at most {max(run.captures)}, {sum(run.captures) / len(run.captures):.2f} on average)")
    print(f"  CPU of what serves the sampled seats (the DING service and its spawn helper, or their own notifiers) "
          f"during the bursts: {run.burst_cpu:.0f} ms over {run.burst_wall:.0f} ms")
    if duplicates:
        print(f"  NOT EXACTLY ONCE on screen: {duplicates}")


def interleaved(fleets: list[Fleet], singles: int, bursts: int) -> None:
    """Measure the fleets turn about: single ``i`` of each, then each burst, the first fleet of
    each pair alternating (so neither is always measured right after the other), so a machine
    whose speed drifts during the run moves both sides of every ratio alike."""
    for index in range(singles):
        for fleet in (fleets if index % 2 == 0 else fleets[::-1]):
            if index < len(fleet.single_seats):
                fleet.single(index)
    for index in range(bursts):
        for fleet in (fleets if index % 2 == 0 else fleets[::-1]):
            time.sleep(2.0)   # every earlier Return and receipt done before the burst
            fleet.burst(index)
    time.sleep(2.0)


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

    fleets: list[Fleet] = []
    try:
        with_service = Fleet(arguments.seats, singles, sample, arguments.bursts, True, arguments.timeout)
        fleets.append(with_service)
        anchor = None
        if anchor_seats:
            anchor = Fleet(anchor_seats, min(singles, anchor_seats), min(sample, anchor_seats), arguments.bursts,
                           False, arguments.timeout)
            fleets.append(anchor)
        interleaved(fleets, singles, arguments.bursts)
        duplicates = [fleet.not_once() for fleet in fleets]
    finally:
        for fleet in fleets:
            fleet.close()
    describe("with the DING service", with_service, duplicates[0])
    if anchor:
        describe("anchor, no DING service (ST2_DING_SERVICE=off: each task serves its seat)", anchor, duplicates[1])
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    single, burst = with_service.single_ms, with_service.burst_ms
    anchor_p50 = percentile(anchor.single_ms, 0.5) if anchor else float("nan")
    ratio = percentile(single, 0.5) / anchor_p50 if anchor else float("nan")
    burst_done = percentile(with_service.burst_submit, 0.5)
    anchor_burst_done = percentile(anchor.burst_submit, 0.5) if anchor else float("nan")
    captured = percentile(with_service.single_captured, 0.5)
    anchor_captured = percentile(anchor.single_captured, 0.5) if anchor else float("nan")
    failed = any(duplicates)
    print(f"RESULT ding_p50_ms={percentile(single, 0.5):.1f} ding_p95_ms={percentile(single, 0.95):.1f} "
          f"ding_max_ms={max(single):.1f} burst_p95_ms={percentile(burst, 0.95):.1f} anchor_p50_ms={anchor_p50:.1f} "
          f"ratio={ratio:.2f} seats={arguments.seats} self_serving={with_service.self_serving} "
          f"burst_done_p50_ms={burst_done:.1f} anchor_burst_done_p50_ms={anchor_burst_done:.1f} "
          f"burst_ratio={burst_done / anchor_burst_done:.2f} captured_p50_ms={captured:.1f} "
          f"anchor_captured_p50_ms={anchor_captured:.1f} captured_ratio={captured / anchor_captured:.2f}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
