"""``st2 check wait-probe <subcommand> [args]``: the wait-primitive instrument (docs/kit.md
§Wait probe). Hand-invoked, wired into no tier: it launches processes and sleeps for its
declared durations. It writes nothing tracked: producers, markers, launch records and its
bookkeeping go to ``${GATE_SDK_TMP_DIR:-.tmp}`` (``<key>.run`` and ``wait-probe/``), trials to
``${GATE_SDK_WORKFLOW_DIR:-.workflow}/wait-primitive-evidence.txt`` (capture tier, gitignored,
advisory); both resolve against the main checkout from a linked worktree.

Subcommands (the roster is printed on stderr at exit 2):

* ``produce <key> <ms>`` — launch a known-duration producer (``nohup bash -c 'sleep …; stamp
  marker' &``), read its PID back, write ``<key>.run`` (``pid=<n> run=<key>``) and the t0 stamp;
* ``waiter <key> <predicate>`` — exec into the wait body: ``marker`` (``until [ -f marker ]``),
  ``liveness`` (``while kill -0 <pid>``) or ``liveness-until`` (``until kill -0 <pid>``, the
  trap); four exit traps (HUP, INT, TERM, EXIT) record its status, time and the producer's
  liveness at its exit;
* ``arm-local <key> <predicate>`` — arm the waiter as a detached shell child (``nohup … &``), the
  harness-uninvolved control;
* ``record <key> <form>`` — append the trial line, classified from its own tells;
* ``report`` — the per-cell tallies, the ceiling tell and the predicate-shaped conclusion;
* ``sweep`` — every predicate at every swept duration on the local form, then the report.

Trial line (closed field set): ``form=<f> predicate=<p> producer_ms=<n> waiter_exit=<n>
marker_at_ms=<n|-> waiter_at_ms=<n> producer_alive_at_exit=<yes|no> class=<c>``, times elapsed
since the producer's launch. Classes: ``ok`` (the waiter outlived its condition), ``reaped`` (a
signal exit with the producer alive), ``predicate`` (a clean zero while the marker was absent:
none yet, or one stamped after the waiter's exit — ``record`` may run after the producer ends),
``unexplained``; ``ceiling`` is named only by ``report``, across the sweep.

Exits: 0 a completed subcommand, 1 ``report`` with no trials recorded, 2 misuse.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from st2.front import Shape, ShapeRefusal, parse
from st2.kit.delegation import checkout
from st2.kit.delegation.process_liveness import is_alive

ROSTER = (
    "usage: st2 check wait-probe <subcommand> [args]\n"
    "  produce <key> <ms>           launch a producer of that duration and record its PID\n"
    "  waiter <key> <predicate>     exec into the wait body (marker | liveness | liveness-until)\n"
    "  arm-local <key> <predicate>  arm the waiter as a detached shell child\n"
    "  record <key> <form>          append the trial line for <key>\n"
    "  report                       tally the recorded trials (exit 1 when there are none)\n"
    "  sweep                        every predicate at every swept duration, local form, then report"
)
PREDICATES = ("marker", "liveness", "liveness-until")
SWEEP_MS = (200, 600, 1500)  # the instrument's calibration: a constant, never a knob
SWEEP_BOUND_SECONDS = 10  # past its producer's duration, a sweep's waiter is ended (TERM) and recorded
EVIDENCE = "wait-primitive-evidence.txt"
FIELDS = ("form", "predicate", "producer_ms", "waiter_exit", "marker_at_ms", "waiter_at_ms", "producer_alive_at_exit", "class")

# The wait body under measurement, one constant every form execs into: $1 result file,
# $2 marker, $3 producer PID, $4 predicate. The traps record the exit once.
WAIT_BODY = r'''
result="$1"; marker="$2"; pid="$3"; predicate="$4"; recorded=0
finish() {
  [ "$recorded" = 1 ] && return; recorded=1
  if kill -0 "$pid" 2>/dev/null; then alive=yes; else alive=no; fi
  printf '%s %s %s\n' "$1" "$(date +%s%3N)" "$alive" > "$result"
}
trap 'finish 129; exit 129' HUP
trap 'finish 130; exit 130' INT
trap 'finish 143; exit 143' TERM
trap 'finish $?' EXIT
case "$predicate" in
  marker) until [ -f "$marker" ]; do sleep 0.02; done ;;
  liveness) while kill -0 "$pid" 2>/dev/null; do sleep 0.02; done ;;
  liveness-until) until kill -0 "$pid" 2>/dev/null; do sleep 0.02; done ;;
esac
exit 0
'''
# The marker is stamped then renamed into place: a redirection creates the file before the stamp
# is taken, and a waiter seeing the empty file would read as exiting before its condition.
PRODUCE = r'''nohup bash -c 'sleep "$0"; date +%s%3N > "$1.tmp" && mv "$1.tmp" "$1"' "$1" "$2" >/dev/null 2>&1 &
echo $!'''
ARM_LOCAL = r'''nohup "$@" >/dev/null 2>&1 &
echo $!'''


class Misuse(Exception):
    pass


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Paths:
    def __init__(self, environ, cwd: str) -> None:
        self.scratch = os.path.join(cwd, checkout.scratch_dir(environ, cwd))
        self.probe = os.path.join(self.scratch, "wait-probe")
        workflow = environ.get("GATE_SDK_WORKFLOW_DIR") or checkout.WORKFLOW_DIR_DEFAULT
        self.evidence = os.path.join(cwd, checkout.resolve(workflow, cwd), EVIDENCE)

    def of(self, key: str, suffix: str) -> str:
        return os.path.join(self.probe, f"{key}.{suffix}")

    def run_record(self, key: str) -> str:
        return os.path.join(self.scratch, f"{key}.run")


def _key(key: str) -> str:
    if not key or "/" in key or key.startswith(".") or any(c.isspace() for c in key):
        raise Misuse(f"key {key!r} is not one path component")
    return key


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)


def produce(paths: Paths, key: str, duration_ms: int) -> int:
    os.makedirs(paths.probe, exist_ok=True)
    t0 = now_ms()
    launched = subprocess.run(["bash", "-c", PRODUCE, "bash", f"{duration_ms / 1000:.3f}", paths.of(key, "marker")],
                              capture_output=True, text=True, check=True)
    pid = int(launched.stdout.strip())
    _write(paths.of(key, "t0"), f"{t0} {duration_ms}\n")
    _write(paths.run_record(key), f"pid={pid} run={key}\n")
    return pid


def producer_pid(paths: Paths, key: str) -> int:
    text = _read(paths.run_record(key)) or ""
    fields = dict(word.split("=", 1) for word in text.split() if "=" in word)
    if not fields.get("pid", "").isdigit():
        raise Misuse(f"no launch record {paths.run_record(key)} (run produce first)")
    return int(fields["pid"])


def waiter_argv(paths: Paths, key: str, predicate: str) -> list[str]:
    if predicate not in PREDICATES:
        raise Misuse(f"predicate {predicate!r} is not one of {', '.join(PREDICATES)}")
    return ["bash", "-c", WAIT_BODY, "wait-body", paths.of(key, "waiter"), paths.of(key, "marker"),
            str(producer_pid(paths, key)), predicate]


def arm_local(paths: Paths, key: str, predicate: str) -> int:
    """The wait body as a detached shell child (``nohup … &``): the same constant ``waiter``
    execs into, armed without a harness and without an interpreter's start-up between the
    producer's launch and the wait."""
    argv = waiter_argv(paths, key, predicate)
    launched = subprocess.run(["bash", "-c", ARM_LOCAL, "bash", *argv], capture_output=True, text=True, check=True)
    pid = int(launched.stdout.strip())
    _write(paths.of(key, "waiter-pid"), f"{pid}\n")
    return pid


def classify(waiter_exit: int, marker_at: int | None, waiter_at: int, alive: bool) -> str:
    """The cause one trial's own tells show (the ceiling is the sweep's, never a line's)."""
    if marker_at is not None and waiter_at >= marker_at:
        return "ok"
    if waiter_exit >= 128 and alive:
        return "reaped"
    # Not "ok", so any marker was stamped after the waiter left: absent when it exited. The
    # marker is read when the trial is recorded, which a loaded machine can delay past it.
    if waiter_exit == 0 and (marker_at is None or marker_at > waiter_at):
        return "predicate"
    return "unexplained"


def record(paths: Paths, key: str, form: str, predicate: str | None = None) -> str:
    if not form or any(c.isspace() or c == "=" for c in form):
        raise Misuse(f"form {form!r} is not one word")
    started = (_read(paths.of(key, "t0")) or "").split()
    result = (_read(paths.of(key, "waiter")) or "").split()
    if len(started) != 2 or len(result) != 3:
        raise Misuse(f"trial {key} has no producer stamp or its waiter has not exited yet")
    t0, duration = int(started[0]), started[1]
    marker_text = (_read(paths.of(key, "marker")) or "").strip()
    marker_at = int(marker_text) - t0 if marker_text.isdigit() else None
    waiter_exit, waiter_at, alive = int(result[0]), int(result[1]) - t0, result[2] == "yes"
    predicate = predicate or (_read(paths.of(key, "predicate")) or "-").strip()
    values = (form, predicate, duration, str(waiter_exit), "-" if marker_at is None else str(marker_at), str(waiter_at),
              "yes" if alive else "no", classify(waiter_exit, marker_at, waiter_at, alive))
    line = " ".join(f"{name}={value}" for name, value in zip(FIELDS, values, strict=True))
    os.makedirs(os.path.dirname(paths.evidence), exist_ok=True)
    with open(paths.evidence, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    return line


def trials(paths: Paths) -> list[dict[str, str]]:
    rows = []
    for line in (_read(paths.evidence) or "").splitlines():
        fields = dict(word.split("=", 1) for word in line.split() if "=" in word)
        if set(FIELDS) <= set(fields):
            rows.append(fields)
    return rows


def report(rows: list[dict[str, str]]) -> str:
    """Per-cell tallies, the ceiling tell, and the predicate-shaped conclusion."""
    cells: dict[tuple[str, str, int], dict[str, int]] = {}
    for row in rows:
        cell = cells.setdefault((row["form"], row["predicate"], int(row["producer_ms"])), {})
        cell[row["class"]] = cell.get(row["class"], 0) + 1
    lines = [f"wait-probe: {len(rows)} trial(s) in {len(cells)} cell(s)"]
    for (form, predicate, duration), counts in sorted(cells.items()):
        tally = " ".join(f"{name}={counts[name]}" for name in sorted(counts))
        lines.append(f"  {form} {predicate} {duration}ms: {tally}")
    early = [row for row in rows if row["class"] != "ok"]
    for form, predicate in sorted({(row["form"], row["predicate"]) for row in rows}):
        mine = [row for row in rows if (row["form"], row["predicate"]) == (form, predicate)]
        failing = sorted({int(row["producer_ms"]) for row in mine if row["class"] != "ok"})
        passing = sorted({int(row["producer_ms"]) for row in mine if row["class"] == "ok"})
        if failing and passing and max(passing) < min(failing):
            lines.append(f"ceiling: form {form} ({predicate}) fails only above {max(passing)}ms "
                         "(every shorter trial held)")
    if not early:
        lines.append("conclusion: every waiter outlived its condition; no form carries a ceiling in the swept range")
    elif all(row["predicate"] != "marker" for row in early):
        lines.append("conclusion: predicate-shaped: every early exit tested the producer's liveness, "
                     "none the completion marker")
    else:
        lines.append(f"conclusion: {len(early)} early exit(s), not all on the liveness predicate; read the cells")
    return "\n".join(lines)


def sweep(paths: Paths, out) -> int:
    for duration in SWEEP_MS:
        for predicate in PREDICATES:
            key = f"sweep-{predicate}-{duration}-{os.urandom(3).hex()}"
            producer = produce(paths, key, duration)
            _write(paths.of(key, "predicate"), predicate + "\n")
            waiter = arm_local(paths, key, predicate)
            deadline = time.monotonic() + duration / 1000 + SWEEP_BOUND_SECONDS
            while is_alive(waiter) and not os.path.exists(paths.of(key, "waiter")):
                if time.monotonic() > deadline:  # a waiter that never exits is ended, and its trap records it
                    os.kill(waiter, 15)
                    deadline = float("inf")
                time.sleep(0.02)
            while not (_read(paths.of(key, "waiter")) or "").endswith("\n"):
                time.sleep(0.02)
            out.write(record(paths, key, "local", predicate) + "\n")
            while is_alive(producer):  # while-polarity on the recorded PID: the trial ends with its producer
                time.sleep(0.02)
            os.unlink(paths.run_record(key))
    out.write(report(trials(paths)) + "\n")
    return 0


# A subcommand and its operands; ``--`` as the first word makes every later word one.
WORDS = Shape(positionals=None, escape="first")


def run(argv: list[str], environ=None, cwd: str | None = None, out=None, err=None) -> int:
    environ = os.environ if environ is None else environ
    cwd = os.getcwd() if cwd is None else cwd
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    paths = Paths(environ, cwd)
    try:
        try:
            words = parse(list(argv), WORDS).positionals
        except ShapeRefusal as refusal:
            raise Misuse(str(refusal)) from None
        if not words:
            raise Misuse("a subcommand is required")
        command, operands = words[0], words[1:]
        arity = {"produce": 2, "waiter": 2, "arm-local": 2, "record": 2, "report": 0, "sweep": 0}
        if command not in arity:
            raise Misuse(f"unknown subcommand {command!r}")
        if len(operands) != arity[command]:
            raise Misuse(f"{command} takes {arity[command]} operand(s), not {len(operands)}")
        if command == "produce":
            if not operands[1].isdigit() or int(operands[1]) <= 0:
                raise Misuse(f"duration {operands[1]!r} is not a positive number of milliseconds")
            out.write(f"wait-probe: produced {_key(operands[0])} pid={produce(paths, operands[0], int(operands[1]))}\n")
        elif command == "waiter":
            argv = waiter_argv(paths, _key(operands[0]), operands[1])
            _write(paths.of(operands[0], "predicate"), operands[1] + "\n")
            os.execvp(argv[0], argv)  # exec, never spawn: the depth and signal disposition a session runs
        elif command == "arm-local":
            _write(paths.of(_key(operands[0]), "predicate"), operands[1] + "\n")
            out.write(f"wait-probe: armed {operands[0]} waiter pid={arm_local(paths, operands[0], operands[1])}\n")
        elif command == "record":
            out.write(record(paths, _key(operands[0]), operands[1]) + "\n")
        elif command == "report":
            rows = trials(paths)
            if not rows:
                out.write(f"wait-probe: no trials recorded in {paths.evidence}\n")
                return 1
            out.write(report(rows) + "\n")
        else:
            return sweep(paths, out)
    except Misuse as misuse:
        err.write(f"wait-probe: {misuse}\n{ROSTER}\n")
        return 2
    return 0


def main(argv: list[str]) -> int:
    return run(argv)
