"""Benchmark: the CPU of the supervisor's short verbs — `st2 up --once`, `tasks --json`, `doctor`
and `validate` — that operators' scripts, timers and the test suite start by the hundred, against
the floor every Python process of the venv pays, `python -c pass`, on the same interpreter.

A real catalog of one shell seat (its own XDG_STATE_HOME in a temp dir) is brought up once; then
each verb and the anchor run in turn, ``--runs`` times each (default 21), interleaved so machine
load hits all alike, from outside the checkout (so no working directory puts it on sys.path). The
figure is each one's median CPU (user + system, from the children's rusage); the ratio is that
over the anchor's. Measured (a script of the same shape) when psutil and filelock left these verbs'
start-up: `up --once` 195 → 161 ms, `tasks --json` 143 → 120, `doctor` 209 → 175 on the 2-core
machine. When the verbs left click (st2/fleet.py; quiet 2-core machine, 21 runs each, the anchor
15 ms): `up --once` 175 → 124–132 ms (ratio 11.5 → 8.1–8.3), `tasks --json` 132 → 93–103, `doctor`
182 → 128–142, `validate` 101 → 64–74. ``--smoke`` runs each twice.

Last line: ``RESULT up_once_ms=… tasks_ms=… doctor_ms=… validate_ms=… anchor_ms=… up_once_ratio=…
tasks_ratio=… doctor_ratio=… validate_ratio=…``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

VERBS = {"up_once": ["up", "--once"], "tasks": ["tasks", "--json"], "doctor": ["doctor"], "validate": ["validate"]}


def cpu_ms(argv: list[str], env: dict[str, str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--smoke", action="store_true", help="each verb and the anchor twice")
    arguments = parser.parse_args()
    runs = 2 if arguments.smoke else arguments.runs
    base = Path(tempfile.mkdtemp(prefix="st2vb-", dir="/tmp"))   # short: tmux sockets live below it
    catalog = base / "c"
    seat = catalog / "agents" / "h" / "one"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "one" {\n    argv "sleep" "600"\n}\n')
    env = {key: value for key, value in os.environ.items() if not key.startswith("ST_AGENT")}
    env.update(CATALOG=str(catalog), XDG_STATE_HOME=str(base / "s"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    st2 = [sys.executable, "-m", "st2"]
    try:
        if subprocess.run([*st2, "up", "--once", "--host", "h"], env=env, cwd=str(base), capture_output=True).returncode:
            raise SystemExit("st2 up --once failed on the benchmark's catalog")
        samples: dict[str, list[float]] = {name: [] for name in (*VERBS, "anchor")}
        for _ in range(runs):
            samples["anchor"].append(cpu_ms([sys.executable, "-c", "pass"], env, str(base)))
            for name, words in VERBS.items():
                samples[name].append(cpu_ms([*st2, *words, "--host", "h"], env, str(base)))
        medians = {name: statistics.median(values) for name, values in samples.items()}
        for name, value in medians.items():
            print(f"{name:9s} median CPU {value:7.1f} ms over {runs} runs"
                  + ("" if name == "anchor" else f"  ({value / medians['anchor']:.2f}x python -c pass)"))
        result = " ".join(f"{name}_ms={medians[name]:.1f}" for name in (*VERBS, "anchor"))
        ratios = " ".join(f"{name}_ratio={medians[name] / medians['anchor']:.2f}" for name in VERBS)
        print(f"RESULT {result} {ratios}", flush=True)
        return 0
    finally:
        subprocess.run([*st2, "down", "--host", "h"], env=env, cwd=str(base), capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
