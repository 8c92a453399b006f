"""The per-firing commands side by side in one run, each against `python -c pass` (issue 19 item 5).

Runs, interleaved round by round so machine load weighs on all alike, through the installed
`st2` console script beside the interpreter (as the harness hooks exec it):
- tee: `st2 driver claude-statusline` over a verbatim 2.1.328 payload, chaining to the renderer
  `printf ok` (every fifth payload moves the fill a bucket, so some runs really publish);
- observe: `st2 driver claude-observe --event PreToolUse`;
- liveness: `st2 hook subagent-stop-liveness` over 10 exited launch records (it spawns its
  reader, so it pays a second interpreter);
- send: `st2 message send` of one message between two declared seats (the real disk, fsyncs);
- send_627: the same send in the roster benchmark's 627-seat catalog (benchmarks/roster.py),
  whose every seat the sender and recipient resolution must know (through the bus's host-local
  seat index, st2/bus/seat_index.py, warm after the first round once the catalog has settled);
- anchor: `python -c pass` with the same interpreter.
Targets: tee, observe and liveness <= 2.5x the anchor, send (both sizes) <= 3x, in every kind
of install. The install kind is printed: an editable install's import finder (setuptools'
default for this flat layout) roughly doubles every start of its interpreter, the anchor's
included, so a dev venv flatters the ratios; a wheel (what `pip install .` and the Nix flake
give operators) starts in about half the time while st2's commands cost the same absolute time,
so it is the stricter measure. Run both:

    .venv/bin/python benchmarks/hot_paths.py                 # this interpreter (the dev venv)
    python3 benchmarks/hot_paths.py --non-editable           # a throwaway venv with `pip install`
                                                             # of this worktree (a wheel), removed after
    python3 benchmarks/hot_paths.py --python /path/bin/python  # an interpreter with st2 installed
                                                             # (its `st2` console script beside it)

`--profile NAME` runs one command (tee, observe, liveness, send, send_627) once under
`-X importtime` after the warm-up and prints its slowest imports by cumulative time instead of
timing (where a path's time goes; importtime itself inflates every figure).
``--smoke`` runs the same path (this interpreter, or the one named) over 2 rounds after one
warm-up, with the roster benchmark's catalog cut to 20 seats.
Usage: python benchmarks/hot_paths.py [RUNS=40] [--python PY | --non-editable] [--profile NAME] [--smoke]
Last line: RESULT tee_ratio=<a> observe_ratio=<b> liveness_ratio=<c> send_ratio=<d> send_627_ratio=<s>
anchor_ms=<e> tee_ms=<f> observe_ms=<g> liveness_ms=<h> send_ms=<i> send_627_ms=<j>
tee_cpu_ratio=… observe_cpu_ratio=… liveness_cpu_ratio=… send_cpu_ratio=… send_627_cpu_ratio=…
install=<editable-finder|path|wheel> fleet_seats=<the send_627 catalog's seats: 627, or 20 in --smoke>
The ratios (the targets) are of wall-time medians; the CPU ratios (user + system time of the
command and every child it waited for, against the anchor's) move far less with the machine's
load, and are printed beside them for a loaded machine.

Last measured (2026-12-01, 40 rounds, load 2-4, a wheel of 586fba9 run alternately with one of
f81d93e; docs/memory.md §Third pass: no pathlib, no finalization): tee 2.01-2.09x (CPU
2.07-2.11), observe 1.90-1.92x (1.89-1.97), liveness 2.21-2.28x (2.26-2.31), send 2.09-2.13x
(2.10-2.13), send_627 2.46-2.54x (2.53-2.58), anchor 9.7-11.2 ms; before: 2.65-2.97, 2.42-2.57,
2.61-2.83, 2.94-3.41, 3.26-3.38x (CPU 2.75-3.06, 2.52-2.66, 2.71-2.92, 2.99-3.33, 3.36-3.44).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from hooks import write_exited_records  # noqa: E402  (the liveness benchmark's record set)
from roster import write_catalog  # noqa: E402  (the roster benchmark's 627-seat catalog)

PAYLOAD = json.loads((REPO / "captures/claude-code/2.1.328/statusline/02-statusline-stdin.json").read_text())
RECORDS = 10
WARM_UPS = 3
FLEET_SEATS = 627
SMOKE_RUNS, SMOKE_WARM_UPS, SMOKE_FLEET_SEATS = 2, 1, 20
TARGETS = {"tee": 2.5, "observe": 2.5, "liveness": 2.5, "send": 3.0, "send_627": 3.0}


KIND_PROBE = """
import sys
if any(name.startswith("__editable__") and name.endswith("_finder") for name in sys.modules):
    print("editable-finder")
else:
    import st2
    print("wheel" if "site-packages" in st2.__file__ else "path")
"""


def install_kind(python: str) -> str:
    """How ``python`` finds st2: an editable finder, a path entry, or site-packages (asked of
    that interpreter from a directory outside the worktree, as a hook runs)."""
    return subprocess.run([python, "-c", KIND_PROBE], capture_output=True, text=True, cwd="/",
                          check=True).stdout.strip()


def non_editable_venv(directory: Path) -> Path:
    """A fresh venv under ``directory`` with this worktree installed as a wheel (``pip install``
    of a copy of the sources, so the worktree gets no build/ directory); its interpreter."""
    source = directory / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "build", "*.egg-info", "__pycache__", ".lab", "node_modules", "tests", "captures"))
    venv = directory / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(source)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if installed.returncode != 0:
        raise SystemExit(f"pip install of the worktree failed:\n{installed.stderr}")
    return python


def profile(name: str, command: list[str], env: dict[str, str], cwd: Path, payload: bytes) -> None:
    """``command`` under ``-X importtime``: its slowest imports by cumulative time."""
    completed = subprocess.run(command, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, cwd=cwd, input=payload,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    rows = []
    for line in completed.stderr.decode(errors="replace").splitlines():
        fields = line.removeprefix("import time:").split("|")
        if not line.startswith("import time:") or len(fields) != 3 or not fields[0].strip().isdigit():
            continue
        own, cumulative, module = int(fields[0]), int(fields[1]), fields[2].rstrip()
        rows.append((cumulative, own, module))
    top = sum(cumulative for cumulative, _, module in rows if not module.startswith("  "))
    print(f"{name}: exit {completed.returncode}; {len(rows)} modules imported, {top / 1000:.1f} ms "
          f"under importtime (top level)")
    for cumulative, own, module in sorted(rows, reverse=True)[:30]:
        print(f"  {cumulative / 1000:6.2f} ms cumulative  {own / 1000:6.2f} ms own  {module}")


def payload_for(index: int) -> bytes:
    value = json.loads(json.dumps(PAYLOAD))
    percent = 3 + index // 5
    value["context_window"]["used_percentage"] = percent
    value["context_window"]["total_input_tokens"] = percent * 10000
    return json.dumps(value).encode()


CPU: dict[str, list[float]] = {}


def timed(command: list[str], env: dict[str, str], cwd: Path, payload: bytes) -> tuple[float, subprocess.CompletedProcess]:
    """Wall milliseconds of one run (its CPU milliseconds, user + system of it and every child
    it waited for, are left in :data:`CPU` under ``"last"``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    completed = subprocess.run(command, env=env, cwd=cwd, input=payload, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU["last"] = [((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000]
    return wall, completed


def make_catalog(root: Path) -> Path:
    catalog = root / "catalog"
    for identity in ("worker", "alice", "bob"):
        seat = catalog / "agents" / "host" / identity
        (seat / "resources" / "inbox").mkdir(parents=True)
        (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh"\n}}\n')
    return catalog


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The per-firing commands side by side, against python -c pass.")
    parser.add_argument("runs", nargs="?", type=int, default=40, help="interleaved rounds (default 40)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--python", help="an interpreter with st2 installed, its st2 console script beside it "
                                        "(default: this interpreter)")
    where.add_argument("--non-editable", action="store_true",
                       help="build a throwaway venv with this worktree pip-installed (a wheel) and time that")
    parser.add_argument("--profile", metavar="NAME", help="print one command's imports (-X importtime) instead")
    parser.add_argument("--smoke", action="store_true",
                        help=f"the same path over {SMOKE_RUNS} rounds, a {SMOKE_FLEET_SEATS}-seat fleet")
    return parser.parse_args()


def main() -> int:
    options = arguments()
    with tempfile.TemporaryDirectory(prefix="st2-bench-hot-") as directory:
        root = Path(directory)
        python = (str(non_editable_venv(root / "install")) if options.non_editable
                  else options.python or sys.executable)
        if options.smoke:
            return measure(root, python, SMOKE_RUNS, options.profile, SMOKE_WARM_UPS, SMOKE_FLEET_SEATS)
        return measure(root, python, options.runs, options.profile)


def measure(root: Path, python: str, runs: int, profiled: str | None, warm_ups: int = WARM_UPS,
            fleet_seats: int = FLEET_SEATS) -> int:
    st2 = Path(python).parent / "st2"
    if not st2.exists():
        print(f"no st2 console script beside {python}; install st2 there (pip install -e . or .)", file=sys.stderr)
        return 1
    root = root / "work"
    root.mkdir()
    catalog = make_catalog(root)
    fleet = root / "fleet"
    write_catalog(fleet, int(time.time() * 1000), fleet_seats)
    write_exited_records(root / ".tmp", RECORDS)
    # A real catalog's declarations are old; these were just written, and the host-local caches
    # (the declaration cache, the bus's seat index) store nothing younger than their settle bound
    # (2 s), so wait it out: the warm-up rounds then fill them as a fleet's first send would.
    time.sleep(2.5)
    # As installed: bytecode caches are written, so an inherited PYTHONDONTWRITEBYTECODE would
    # time the compiler instead.
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("DELEGATION_KIT_", "GATE_SDK_", "ST2_CLAUDE_", "ST_"))
           and key not in ("PYTHONDONTWRITEBYTECODE", "CATALOG", "PYTHONPROFILEIMPORTTIME")}
    env.update(HOME=str(root), ST_CLAUDE_STATUSLINE_RENDERER="printf ok", ST2_CLAUDE_SESSION="bench",
               XDG_STATE_HOME=str(root / "state"))
    identity = ["--identity", "host.worker", "--catalog", str(catalog)]
    commands = {
        "anchor": ([python, "-c", "pass"], lambda index: b""),
        "tee": ([str(st2), "driver", "claude-statusline", *identity], payload_for),
        "observe": ([str(st2), "driver", "claude-observe", *identity, "--event", "PreToolUse"],
                    lambda index: b'{"session_id":"bench","tool_name":"Bash"}'),
        "liveness": ([str(st2), "hook", "subagent-stop-liveness"],
                     lambda index: b'{"session_id":"bench","hook_event_name":"SubagentStop","stop_hook_active":false}'),
        "send": ([str(st2), "--catalog", str(catalog), "message", "send", "bob", "--as", "host.alice",
                  "-m", "benchmark body"], lambda index: b""),
        "send_627": ([str(st2), "--catalog", str(fleet), "message", "send", "alpha.seat-0000", "--as",
                      "beta.seat-0001", "-m", "benchmark body"], lambda index: b""),
    }
    if profiled is not None and profiled not in TARGETS:
        print(f"--profile takes one of {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for index in range(-warm_ups, 0 if profiled else runs):  # warm-up rounds: bytecode and page caches
        for name, (command, payload) in commands.items():
            elapsed, completed = timed(command, env, root, payload(max(index, 0)))
            if completed.returncode != 0 or (name == "tee" and completed.stdout != b"ok"):
                print(f"{name} failed ({completed.returncode}): {completed.stdout[-200:]!r} "
                      f"{completed.stderr[-2000:].decode(errors='replace')}", file=sys.stderr)
                return 1
            if index >= 0:
                samples[name].append(elapsed)
                CPU.setdefault(name, []).append(CPU["last"][0])
    kind = install_kind(python)
    if profiled:
        print(f"install: {kind} ({python})")
        command, payload = commands[profiled]
        profile(profiled, command, env, root, payload(0))
        return 0
    delivered = len(list((catalog / "agents" / "host" / "bob" / "resources" / "inbox").iterdir()))
    log = (root / ".workflow" / "subagent-stop-liveness.log").read_text().splitlines()
    if delivered != runs + warm_ups or f"verdict=green  spawn=-  records={RECORDS}" not in log[-1]:
        print(f"unexpected outcome: {delivered} messages, last log line {log[-1] if log else '(none)'}", file=sys.stderr)
        return 1
    medians = {name: statistics.median(values) for name, values in samples.items()}
    cpu = {name: statistics.median(CPU[name]) for name in samples}
    anchor = medians["anchor"]
    print(f"{runs} interleaved rounds; load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} "
          f"on {os.cpu_count()} cpus; install: {kind} ({python})")
    print(f"python -c pass (anchor): median {anchor:.1f} ms")
    for name, target in TARGETS.items():
        ratio = medians[name] / anchor
        print(f"{name:9s} median {medians[name]:6.1f} ms  ratio {ratio:.2f}  (target <= {target}: "
              f"{'met' if ratio <= target else 'NOT met'})")
    print(f"cpu (user+sys, with waited children) medians: anchor {cpu['anchor']:.1f} ms; "
          + ", ".join(f"{name} {cpu[name]:.1f} ms ({cpu[name] / cpu['anchor']:.2f}x)" for name in TARGETS))
    print("RESULT " + " ".join(f"{name}_ratio={medians[name] / anchor:.2f}" for name in TARGETS)
          + f" anchor_ms={anchor:.1f} " + " ".join(f"{name}_ms={medians[name]:.1f}" for name in TARGETS)
          + " " + " ".join(f"{name}_cpu_ratio={cpu[name] / cpu['anchor']:.2f}" for name in TARGETS)
          + f" install={kind} fleet_seats={fleet_seats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
