"""The harness-context write-policy replay benchmark (docs/records.md §Write policy,
docs/records.md §Why bucket quantization), on a deterministic synthetic corpus we can publish.

Corpus: Codex-like sessions (about 4,000 readings each, a 258,400-token window, occupancy rising
through each turn, auto-compactions resetting it, percent computed with Codex's own 12,000-token
baseline rule) and Claude-like sessions (a reading every 5 s while a turn is active, Claude's own
integer percent). Every policy row of docs/records.md §Why bucket quantization is replayed through the real
:class:`st2.records.harness_context.Writer` with a FakeClock, the rejected ones injected as its
``policy``; a compaction edge always writes under every policy.

Per policy: writes per active hour per agent (an agent is active over its session's span, idle
gaps included, as in the replayed corpus's 30.6 h median span), the p95 gap between the true occupancy and
the record's at every reading (in % of window), and missed warnings — the share of compactions
whose cycle truly reached a threshold while the record at the compaction did not — the worst
over thresholds 80–97 (each threshold is printed on a comment line above).
Anchor: the shipped policy's cost in docs/records.md §Why bucket quantization, 34.1 writes per hour per agent.

Usage: python benchmarks/write_policy.py [--codex-sessions N] [--claude-sessions N] [--seed S] [--jobs J] [--smoke]
(``--smoke``: the same replay over one session of each kind, cut to 400 Codex readings and 4 Claude turns.)
Last line: RESULT writes_per_hour=<x> missed_warnings_pct=<z> seed_ratio=<x/34.1>
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from st2.base.clock import FakeClock  # noqa: E402
from st2.records import harness_context  # noqa: E402
from st2.records.harness_context import CompactionEdge, Reading, Writer  # noqa: E402

SEED_WRITES_PER_HOUR = 34.1
CODEX_WINDOW = 258_400
CODEX_BASELINE = 12_000
CLAUDE_WINDOW = 200_000
THRESHOLDS = range(80, 98)
SHIPPED = "bucket-1pct-300s"
CODEX_READINGS, CLAUDE_TURNS = 4_000, 40
SMOKE_CODEX_READINGS, SMOKE_CLAUDE_TURNS = 400, 4


@dataclass
class Event:
    """One producer event: a reading, at a time, maybe closing a turn, maybe a compaction."""

    at_ms: int
    used_tokens: int
    percent: float
    turn_end: bool = False
    compaction: bool = False


@dataclass
class Session:
    harness: str
    window: int
    events: list[Event]
    active_ms: int  # the session's span: the agent is live through its idle gaps, as in the replayed corpus


def codex_percent(used: int, window: int) -> float:
    """Codex's displayed fill: 100 − its own "% context left", baseline-normalized."""
    effective = window - CODEX_BASELINE
    remaining = max(0, effective - max(0, used - CODEX_BASELINE))
    return float(100 - min(100, max(0, round(remaining / effective * 100))))


def codex_session(chooser: random.Random, start_ms: int, readings: int = CODEX_READINGS) -> Session:
    events: list[Event] = []
    now, used = start_ms, CODEX_BASELINE + chooser.randint(2_000, 8_000)
    compact_at = chooser.uniform(0.86, 0.97)
    while len(events) < readings:
        for step in range(chooser.randint(8, 90)):
            now += chooser.randint(500, 9_000)
            used += chooser.choice((chooser.randint(50, 600), chooser.randint(600, 4_000)))
            if used >= compact_at * CODEX_WINDOW:
                events.append(Event(now, used, codex_percent(used, CODEX_WINDOW)))
                now += chooser.randint(2_000, 20_000)
                used = int(CODEX_WINDOW * chooser.uniform(0.08, 0.22))
                compact_at = chooser.uniform(0.86, 0.97)
                events.append(Event(now, used, codex_percent(used, CODEX_WINDOW), compaction=True))
                continue
            events.append(Event(now, used, codex_percent(used, CODEX_WINDOW)))
        events[-1].turn_end = True
        now += chooser.randint(30_000, 45 * 60_000)  # idle between turns
    events = events[:readings]
    return Session("codex", CODEX_WINDOW, events, events[-1].at_ms - events[0].at_ms)


def claude_session(chooser: random.Random, start_ms: int, turns: int = CLAUDE_TURNS) -> Session:
    events: list[Event] = []
    now, used = start_ms, chooser.randint(15_000, 30_000)
    for _ in range(turns):
        for _ in range(chooser.randint(6, 240)):  # 30 s to 20 min of 5-second readings
            now += 5_000
            # The status line re-renders every 5 s; usage moves only when a response lands.
            if chooser.random() < 0.2:
                used += chooser.randint(300, 3_000)
            if used >= 0.95 * CLAUDE_WINDOW:
                events.append(Event(now, used, float(min(100, used * 100 // CLAUDE_WINDOW))))
                now += 5_000
                used = int(CLAUDE_WINDOW * chooser.uniform(0.1, 0.2))
                events.append(Event(now, used, float(used * 100 // CLAUDE_WINDOW), compaction=True))
                continue
            events.append(Event(now, used, float(min(100, used * 100 // CLAUDE_WINDOW))))
        events[-1].turn_end = True
        now += chooser.randint(60_000, 60 * 60_000)
    return Session("claude", CLAUDE_WINDOW, events, events[-1].at_ms - events[0].at_ms)


# --- the policies ---------------------------------------------------------------------------------


class Replay:
    """State a policy may consult beyond the on-disk record: whether this reading closes a turn."""

    turn_end = False


def every_distinct(replay: Replay):
    def policy(current, reading, harness, now_ms):
        changed = (current.used_tokens, current.used_percent) != (reading.used_tokens, reading.used_percent)
        return "distinct" if changed else None
    return policy


def turn_boundary(replay: Replay):
    def policy(current, reading, harness, now_ms):
        return "turn-end" if replay.turn_end else None
    return policy


def movement(percent_step: float, floor_ms: int):
    def make(replay: Replay):
        def policy(current, reading, harness, now_ms):
            if (current.used_tokens, current.used_percent) == (reading.used_tokens, reading.used_percent):
                return None
            if current.used_percent is None or reading.used_percent is None:
                return "withheld"
            if abs(reading.used_percent - current.used_percent) >= percent_step:
                return "moved"
            return "floor" if now_ms - current.written_at_ms >= floor_ms else None
        return policy
    return make


def bucket(percent_step: float, heartbeat_ms: int):
    def make(replay: Replay):
        if percent_step == harness_context.HARNESS_CONTEXT_BUCKET_PERCENT and heartbeat_ms == harness_context.HARNESS_CONTEXT_HEARTBEAT_MS:
            return None  # the shipped policy: the writer's own `due`, untouched

        def policy(current, reading, harness, now_ms):
            def index(percent):
                return None if percent is None else math.floor(percent / percent_step)
            if index(current.used_percent) != index(reading.used_percent):
                return "bucket"
            fresh = reading.observed_at_ms is None or reading.observed_at_ms > current.observed_at_ms
            return "heartbeat" if fresh and now_ms - current.written_at_ms >= heartbeat_ms else None
        return policy
    return make


POLICIES = {
    "every-distinct-reading": every_distinct,
    "turn-boundary-only": turn_boundary,
    "movement-5pct-60s": movement(5.0, 60_000),
    "movement-1pct-60s": movement(1.0, 60_000),
    "bucket-5pct-300s": bucket(5.0, 300_000),
    SHIPPED: bucket(1.0, 300_000),
}


@dataclass
class Outcome:
    writes: int = 0
    active_ms: int = 0
    errors: list[float] | None = None
    eligible: dict[int, int] | None = None
    missed: dict[int, int] | None = None


def replay_session(session: Session, make_policy, seat: Path, outcome: Outcome) -> None:
    clock = FakeClock(wall_ms=session.events[0].at_ms - 1_000)
    replay = Replay()
    writer = Writer(seat, "host.bench", session.harness, uuid.uuid4().hex, clock, policy=make_policy(replay))
    record_path = seat / harness_context.RECORD_NAME
    record_path.unlink(missing_ok=True)
    written: float | None = None  # the record's usedPercent, what an alarm reads
    written_tokens: int | None = None
    cycle_peak = 0.0
    for event in session.events:
        clock.set_wall_ms(event.at_ms)
        if event.compaction:
            for threshold in THRESHOLDS:
                if cycle_peak >= threshold:
                    outcome.eligible[threshold] += 1
                    if written is None or written < threshold:
                        outcome.missed[threshold] += 1
            cycle_peak = 0.0
        replay.turn_end = event.turn_end
        reading = Reading(used_tokens=event.used_tokens, window_tokens=session.window, used_percent=event.percent,
                          observed_at_ms=event.at_ms)
        if writer.publish(reading, CompactionEdge("auto") if event.compaction else None):
            outcome.writes += 1
            written = writer.last_written.used_percent
            written_tokens = writer.last_written.used_tokens
        cycle_peak = max(cycle_peak, event.percent)
        if written_tokens is not None:
            # The gap between the true occupancy and the record's, in % of the window.
            outcome.errors.append(abs(event.used_tokens - written_tokens) * 100 / session.window)
    outcome.active_ms += session.active_ms


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(math.ceil(fraction * len(ordered))) - 1)] if ordered else 0.0


def corpus(seed: int, codex_sessions: int, claude_sessions: int, codex_readings: int = CODEX_READINGS,
           claude_turns: int = CLAUDE_TURNS) -> list[Session]:
    chooser = random.Random(seed)
    start = 1_788_000_000_000
    sessions = [codex_session(chooser, start, codex_readings) for _ in range(codex_sessions)]
    return sessions + [claude_session(chooser, start, claude_turns) for _ in range(claude_sessions)]


def run_policy(job: tuple[str, int, int, int, int, int]) -> tuple[str, float, float, dict[int, float], int]:
    """Replay the whole corpus under one policy, in its own catalog; return
    (name, writes per agent-hour, p95 error, missed % by threshold, eligible at 90)."""
    name, *shape = job
    sessions = corpus(*shape)
    shared_memory = Path("/dev/shm")
    base = Path(tempfile.mkdtemp(prefix="st2-write-policy-", dir=shared_memory if shared_memory.is_dir() else None))
    try:
        seat = base / "catalog" / "agents" / "host" / "bench"
        seat.mkdir(parents=True)
        outcome = Outcome(errors=[], eligible={t: 0 for t in THRESHOLDS}, missed={t: 0 for t in THRESHOLDS})
        for session in sessions:
            replay_session(session, POLICIES[name], seat, outcome)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    # Each session is one agent, so writes over summed session hours is per agent-hour.
    per_agent_hour = outcome.writes / (outcome.active_ms / 3_600_000)
    missed = {t: 100.0 * outcome.missed[t] / outcome.eligible[t] for t in THRESHOLDS if outcome.eligible[t]}
    return name, per_agent_hour, percentile(outcome.errors, 0.95), missed, outcome.eligible[90]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codex-sessions", type=int, default=3)
    parser.add_argument("--claude-sessions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20260829)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--smoke", action="store_true", help="the same replay over a tiny corpus")
    arguments = parser.parse_args(argv)
    if arguments.smoke:
        arguments.codex_sessions = arguments.claude_sessions = 1
    readings, turns = (SMOKE_CODEX_READINGS, SMOKE_CLAUDE_TURNS) if arguments.smoke else (CODEX_READINGS, CLAUDE_TURNS)
    shape = (arguments.seed, arguments.codex_sessions, arguments.claude_sessions, readings, turns)
    sessions = corpus(*shape)
    readings = sum(len(session.events) for session in sessions)
    compactions = sum(event.compaction for session in sessions for event in session.events)
    hours = sum(session.active_ms for session in sessions) / 3_600_000
    print(f"# corpus seed={arguments.seed} codex_sessions={arguments.codex_sessions} "
          f"claude_sessions={arguments.claude_sessions} readings={readings} compactions={compactions} "
          f"session_hours={hours:.1f}")
    jobs = [(name, *shape) for name in POLICIES]
    if arguments.jobs > 1:
        with multiprocessing.Pool(min(arguments.jobs, len(jobs))) as pool:
            results = pool.map(run_policy, jobs)
    else:
        results = [run_policy(job) for job in jobs]
    lines = []
    for name, per_hour, p95, missed, eligible in results:
        detail = " ".join(f"{t}:{missed.get(t, 0.0):.1f}" for t in THRESHOLDS)
        print(f"# {name} missed_pct_by_threshold {detail} (compactions eligible at 90%: {eligible})")
        worst = max(missed.values()) if missed else 0.0
        lines.append(f"policy={name} writes_per_hour={per_hour:.1f} p95_error_pct={p95:.2f} missed_warnings_pct={worst:.1f}")
    print("\n".join(lines))
    _, per_hour, _, missed, _ = next(result for result in results if result[0] == SHIPPED)
    worst = max(missed.values()) if missed else 0.0
    print(f"RESULT writes_per_hour={per_hour:.1f} missed_warnings_pct={worst:.1f} "
          f"seed_ratio={per_hour / SEED_WRITES_PER_HOUR:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
