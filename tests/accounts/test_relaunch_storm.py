"""Issue 36's relaunch-storm proof at the process tier: 100 seats of one account, a stand-in harness
that records each start (its own clock, first thing) and the credentials it read from its account's
config location, a simulated reboot (supervisor and every seat SIGKILLed by PID, the runtime scopes
removed, as a host restart leaves them), then the real `st2 up`: no two starts closer than the
declared spacing, with no slack below it, and every seat back.

A start is the stand-in's process start as the kernel records it (field 22 of /proc/<pid>/stat, in
clock ticks: the pane process tmux forks, the task's own PID). Admission counts a start from when
its launch returned, so each fork is at least one spacing after the previous one, and whole ticks
keep that (floor(b) - floor(a) >= floor(b - a)). The stand-in's own clock reading, taken after
its shell started, is printed beside it: scheduling delays it by any amount under load.

Plain argv seats have no conversation for st2 to resume (resuming is a harness driver's, proved per
harness in the lab: tests/lab/resume_fleet.py); the stand-in shows what it can: each relaunched seat
finds the state its previous run left in its own directory, once."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from supervisor_support import poll_for, temporary_fleet

from st2.runtime import launch_record
from st2.supervisor.backends.process_group import kill_group, reap_children

pytestmark = pytest.mark.process

SEATS = 100
SPACING_MS = 100
STAND_IN = """#!/bin/sh
# A stand-in harness: its start (the kernel's, in ticks, and its own clock), then the credentials
# its account's config location holds and the marker its previous run left, one appended line
# (shorter than PIPE_BUF: never torn).
ticks=$(cut -d' ' -f22 /proc/$$/stat)
now=$(date +%s%N)
credentials=$(cat "$CLAUDE_CONFIG_DIR/credentials")
previous=$(cat "$3/$1" 2>/dev/null || echo none)
echo "$ticks $now $1 $credentials $previous" >> "$2"
echo "run-$now" > "$3/$1"
exec sleep 600
"""


def catalog_kdl(config: Path, spacing: str, concurrency: int = 1) -> str:
    return (f'catalog {{\n    account "main" {{\n        config-dir claude="{config}"\n'
            f'        relaunch spacing="{spacing}" concurrency={concurrency}\n    }}\n}}\n')


def starts(log: Path) -> list[tuple[int, int, str, str, str]]:
    """(kernel start ticks, own clock ns, seat, credentials read, previous run's marker) per start."""
    lines = log.read_text().splitlines() if log.exists() else []
    return [(int(ticks), int(now), seat, credentials, previous)
            for ticks, now, seat, credentials, previous in (line.split(" ") for line in lines)]


def test_a_hundred_seats_relaunched_after_a_reboot_start_one_spacing_apart_and_all_come_back():
    with temporary_fleet("st2r-") as fleet:
        config = fleet.base / "claude-main"
        config.mkdir()
        (config / "credentials").write_text("token-main\n")
        script, log, state = fleet.base / "stand-in.sh", fleet.base / "starts.log", fleet.base / "state"
        script.write_text(STAND_IN)
        state.mkdir()
        # The first generation comes up 64 at a time: only the relaunch is measured.
        (fleet.catalog / "catalog.kdl").write_text(catalog_kdl(config, "1ms", 64))
        for index in range(SEATS):
            fleet.seat(f"s{index:03d}", f'    account "main"\n    argv "sh" "{script}" "s{index:03d}" "{log}" "{state}"')
        first = fleet.up("--interval", "60s")
        poll_for(lambda: len(starts(log)) == SEATS, lambda: f"the first generation\n{fleet.log()[-3000:]}", timeout=90)
        assert poll_for(lambda: len(fleet.running()) == SEATS, timeout=30), fleet.log()[-3000:]

        # The reboot: every process dies at once (supervisor first, each seat's group by PID), the
        # runtime scopes go (launch records, the admission record); the catalog and seats' own state stay.
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        for runtime_id in launch_record.recorded_ids(fleet.scope):
            kill_group(fleet.record(runtime_id).identity, grace_seconds=0)
        reap_children()
        shutil.rmtree(fleet.state / "st2" / "scopes")
        (fleet.catalog / "catalog.kdl").write_text(catalog_kdl(config, f"{SPACING_MS}ms"))

        began = time.monotonic()
        fleet.up("--interval", "60s")
        # Mid-storm the queue is visible: `st2 tasks` names the account and a place in it.
        queued = poll_for(lambda: [row["admission"] for row in fleet.tasks()["tasks"] if row["admission"]],
                          "a queued row in st2 tasks", timeout=20)
        assert {entry["account"] for entry in queued} == {"main"} and min(entry["position"] for entry in queued) >= 1
        poll_for(lambda: len(starts(log)) == 2 * SEATS, lambda: f"the relaunch\n{fleet.log()[-3000:]}", timeout=60)
        elapsed = time.monotonic() - began
        assert poll_for(lambda: len(fleet.running()) == SEATS, timeout=30), fleet.log()[-3000:]

        relaunched = starts(log)[SEATS:]
        assert sorted(seat for _, _, seat, _, _ in relaunched) == [f"s{index:03d}" for index in range(SEATS)]
        assert {credentials for _, _, _, credentials, _ in relaunched} == {"token-main"}
        assert all(previous.startswith("run-") for *_, previous in relaunched), "each found its previous run"
        tick_ms = 1000 / os.sysconf("SC_CLK_TCK")
        forks = sorted(ticks for ticks, *_ in relaunched)
        gaps_ms = [(later - earlier) * tick_ms for earlier, later in zip(forks, forks[1:])]
        assert min(gaps_ms) >= SPACING_MS, f"two starts {min(gaps_ms):.0f} ms apart (declared {SPACING_MS} ms)"
        clocks = sorted(now for _, now, *_ in relaunched)
        own = [(later - earlier) / 1e6 for earlier, later in zip(clocks, clocks[1:])]
        print(f"{SEATS} relaunches in {elapsed:.1f} s (bound {(SEATS - 1) * SPACING_MS / 1000:.1f} s); forks apart "
              f"min {min(gaps_ms):.0f} ms, median {sorted(gaps_ms)[len(gaps_ms) // 2]:.0f} ms; the stand-ins' own "
              f"clocks min {min(own):.1f} ms, median {sorted(own)[len(own) // 2]:.1f} ms")
