"""Campaign part 1 — supervisor replacement.

A fleet of live PTY and exec tasks (full size: 25 seats, each a tmux-hosted agent plus one exec
task = 50) under a real ``st2 up``; then rounds of SIGKILL or SIGTERM of the supervisor — some
while it is idle, some in the middle of a pass (killed on the k-th declaration it opens while
reading the catalog, seen through our own inotify watch) — each followed by a new ``st2 up``,
some of them a different build of st2 (a copied package tree whose version differs, started from
its own entry point). After every round:

- lost: a task whose PID or process start time changed, or that ``st2 tasks --json`` does not
  list as running with its recorded PID;
- duplicated: a task the new supervisor launched or restarted, a runtime id listed twice, or a
  second live process running one task's unique argv.

``RESULT lost=<n> duplicated=<n> rounds=<n>``.
"""

from __future__ import annotations

import os
import random
import signal
import time
from pathlib import Path

import inotify_simple
import psutil

from fault_common import Verdict, poll_for, scaled
from replacement_build import build_identity, replacement_build
from supervisor_support import Fleet

FULL_SEATS = 25          # x 2 tasks = 50
FULL_ROUNDS = 20
# Every (signal, mid-pass, replaced build) combination, so even the tier's rounds cover each.
KINDS = [(number, mid, replaced) for number in (signal.SIGKILL, signal.SIGTERM)
         for mid in (False, True) for replaced in (False, True)]
# Each task runs `sleep <a number unique to this run and task>`: a second copy is countable, and
# two campaign runs at once (the tier beside the benchmark) never count each other's.
MARKER_BASE = 10_000_000 + (os.getpid() % 100_000) * 100


def _declare(fleet: Fleet, seats: int) -> dict[str, str]:
    """Seat ``s<i>``: PTY agent ``sleep M`` and exec ``worker`` ``sleep M+1``; returns runtime
    id -> its unique argv number."""
    markers = {}
    for index in range(seats):
        identity = f"s{index:02d}"
        agent, worker = MARKER_BASE + 2 * index, MARKER_BASE + 2 * index + 1
        fleet.seat(identity, f'    argv "sleep" "{agent}"\n'
                             f'    exec "worker" {{ argv "sleep" "{worker}"; }}')
        markers[f"h.{identity}"] = str(agent)
        markers[f"h.{identity}.worker"] = str(worker)
    return markers


def _copies(markers: dict[str, str]) -> dict[str, int]:
    """runtime id -> how many live processes run its unique ``sleep <n>``."""
    wanted = {value: key for key, value in markers.items()}
    counts = {key: 0 for key in markers}
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if len(cmdline) == 2 and cmdline[0].endswith("sleep") and cmdline[1] in wanted:
            counts[wanted[cmdline[1]]] += 1
    return counts


def _kill_mid_pass(fleet: Fleet, supervisor, number: int, seats: int, generator: random.Random) -> bool:
    """Wake a pass (republish one declaration unchanged, by atomic rename) and deliver ``number``
    when the supervisor opens its k-th declaration. Returns whether the signal landed mid-read."""
    watch = inotify_simple.INotify()
    try:
        for seat in sorted((fleet.catalog / "agents" / "h").iterdir()):
            watch.add_watch(str(seat), inotify_simple.flags.OPEN)
        target = generator.randrange(1, seats + 1)
        identity = f"s{generator.randrange(seats):02d}"
        declaration = fleet.catalog / "agents" / "h" / identity / "agent.kdl"
        temporary = fleet.base / ".republish.tmp"
        temporary.write_bytes(declaration.read_bytes())
        os.replace(temporary, declaration)
        opened = 0
        deadline = time.monotonic() + 20
        while opened < target and time.monotonic() < deadline:
            opened += sum(1 for event in watch.read(timeout=200) if event.name == "agent.kdl")
        supervisor.send_signal(number)
        return opened >= target
    finally:
        watch.close()


def run(scale: float, base: Path, seed: int = 20261201) -> Verdict:
    seats = scaled(FULL_SEATS, scale, floor=3)
    rounds = scaled(FULL_ROUNDS, scale, floor=len(KINDS))
    generator = random.Random(seed)
    schedule = []
    while len(schedule) < rounds:
        batch = list(KINDS)
        generator.shuffle(batch)
        schedule.extend(batch)
    schedule = schedule[:rounds]
    fleet = Fleet(Path(base))
    evidence: list[str] = []
    lost = duplicated = mid_pass = replaced_rounds = 0
    markers: dict[str, str] = {}
    try:
        markers.update(_declare(fleet, seats))
        total = len(markers)
        fleet.up("--interval", "60s")
        live = poll_for(lambda: (lambda r: r if len(r) == total else None)(fleet.running()), timeout=180, step=0.1)
        if not live:
            raise AssertionError(f"the first generation never ran all {total} tasks:\n{fleet.log()[-3000:]}")
        for round_number, (number, mid, replaced) in enumerate(schedule):
            supervisor = fleet.supervisors[-1]
            if mid:
                mid_pass += _kill_mid_pass(fleet, supervisor, number, seats, generator)
            else:
                supervisor.send_signal(number)
            code = supervisor.wait(timeout=60)
            if number == signal.SIGTERM and code != 0:
                evidence.append(f"round {round_number}: SIGTERM exit {code}: {fleet.log()[-800:]}")
            now = fleet.running()
            for rid, identity in live.items():
                if now.get(rid) != identity:
                    lost += 1
                    evidence.append(f"round {round_number}: {rid} changed while no supervisor ran: "
                                    f"{identity} -> {now.get(rid)}")
            command = None
            if replaced:
                entry = replacement_build(fleet.base / "builds", f"r{round_number}")
                version, location = build_identity(entry)
                if not version.endswith(f"+r{round_number}") or not location.startswith(str(fleet.base)):
                    raise AssertionError(f"the replacement build imports {location} ({version})")
                command = [str(entry)]
                replaced_rounds += 1
            fleet.up("--interval", "60s", command=command)
            index = len(fleet.logs) - 1
            if not poll_for(lambda: fleet.log(index).count("adopted ") >= total or "error" in fleet.log(index),
                            timeout=120, step=0.05):
                evidence.append(f"round {round_number}: the new supervisor never adopted all {total}: "
                                f"{fleet.log(index)[-1500:]}")
            if command is not None:
                announced = f"(st2 {version} from {location})"
                if not poll_for(lambda: announced in fleet.log(index), timeout=30):
                    raise AssertionError(f"round {round_number}: the supervisor never said it runs {announced}: "
                                         f"{fleet.log(index)[-800:]}")
            log = fleet.log(index)
            for line in log.splitlines():
                if " launched " in f" {line} " or " restarted " in f" {line} ":
                    words = line.split()[2:]
                    duplicated += len(words)
                    evidence.append(f"round {round_number}: {line}")
            adopted = [line.split()[-1] for line in log.splitlines() if line.startswith("st2 up: adopted ")]
            for rid in set(adopted):
                if adopted.count(rid) > 1:
                    duplicated += adopted.count(rid) - 1
                    evidence.append(f"round {round_number}: {rid} adopted {adopted.count(rid)} times")
            inventory = fleet.tasks()
            ids = [row["runtimeId"] for row in inventory["tasks"]]
            for rid in set(ids):
                if ids.count(rid) > 1:
                    duplicated += ids.count(rid) - 1
                    evidence.append(f"round {round_number}: st2 tasks lists {rid} {ids.count(rid)} times")
            rows = {row["runtimeId"]: row for row in inventory["tasks"]}
            for rid, (pid, _) in live.items():
                row = rows.get(rid)
                if row is None or row["runtime"]["state"] != "running" or row["runtime"]["pid"] != pid:
                    lost += 1
                    evidence.append(f"round {round_number}: st2 tasks shows {rid} as {row and row['runtime']}")
            if inventory["complete"] is not True:
                evidence.append(f"round {round_number}: inventory incomplete: {inventory['errors']}")
                lost += 1
            for rid, count in _copies(markers).items():
                if count != 1:
                    (evidence.append(f"round {round_number}: {count} processes run {rid}"))
                    if count > 1:
                        duplicated += count - 1
                    else:
                        lost += 1
        figures = {"lost": lost, "duplicated": duplicated, "rounds": rounds}
        return Verdict("supervisor-replacement", figures, evidence,
                       {"tasks": total, "mid_pass_kills": mid_pass, "replaced_builds": replaced_rounds,
                        "sigkill": sum(1 for kind in schedule if kind[0] == signal.SIGKILL)})
    finally:
        fleet.cleanup()
        for process in psutil.process_iter(["cmdline"]):   # any duplicate a faulty build left
            cmdline = process.info["cmdline"] or []
            if len(cmdline) == 2 and cmdline[0].endswith("sleep") and cmdline[1] in set(markers.values()):
                process.kill()
