"""Campaign part 3 — records under concurrency and kill.

Four writer processes of one session (the wrapper and hooks of a seat share an incarnation)
each make their share of writes (full size 2,000 each) to one seat's harness-context and
harness-state through the real writers, while this process SIGKILLs a random writer whenever it
has made a random amount of progress (and restarts it where it stopped), and samples both
records continuously. Each writer announces the digest of the exact bytes before it publishes
them (:mod:`record_writer`).

- torn: a sampled or final record that does not decode, or whose bytes no writer announced;
  or two announced publications with identical bytes (every landed write must be byte-distinct);
- residue: any temp file left beside a record (inside the seat directory), or left in the
  records' staging directories once the campaign is over and a fresh writer has written again
  (a killed writer's temp must be swept, not accumulate).

``RESULT torn=<n> residue=<n>``.
"""

from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from fault_common import Verdict, poll_for, scaled

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
WRITERS = 4
FULL_WRITES = 2000
FULL_KILLS = 60
EXPECTED_FILES = {"harness-context", "harness-state", ".harness-context.lock", ".harness-state.lock"}


def _progress(log: Path) -> int:
    try:
        return log.read_bytes().count(b"\ndone ") + log.read_bytes().startswith(b"done ")
    except FileNotFoundError:
        return 0


def _last_done(log: Path) -> int:
    last = -1
    try:
        for line in log.read_text().splitlines():
            if line.startswith("done "):
                last = int(line.split()[1])
    except FileNotFoundError:
        pass
    return last


def run(scale: float, base: Path, seed: int = 20261203) -> Verdict:
    from st2.base.clock import SYSTEM_CLOCK
    from st2.records import harness_context, harness_state

    base = Path(base)
    seat = base / "c" / "agents" / "h" / "writer"
    seat.mkdir(parents=True)
    (seat / "agent.kdl").write_text('agent "writer" {\n    argv "sleep" "1"\n}\n')
    writes = scaled(FULL_WRITES, scale, floor=100)
    kills_wanted = scaled(FULL_KILLS, scale, floor=6)
    token = harness_state.session_token()
    seq = harness_state.claim(seat, "h.writer", "claude", token, SYSTEM_CLOCK)
    claimed = hashlib.sha256((seat / "harness-state").read_bytes()).hexdigest()   # this process's write
    generator = random.Random(seed)
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    logs = [base / f"writer-{index}.log" for index in range(WRITERS)]
    ranges = [(index * writes, writes) for index in range(WRITERS)]     # disjoint index ranges

    def spawn(index: int) -> subprocess.Popen:
        start, count = ranges[index]
        done = _last_done(logs[index])
        first = start if done < start else done + 1
        return subprocess.Popen([sys.executable, str(HERE / "record_writer.py"), str(seat), str(logs[index]),
                                 str(first), str(start + count - first), token, str(seq)],
                                env=environment, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    evidence: list[str] = []
    samples: list[tuple[str, bytes]] = []
    processes = [spawn(index) for index in range(WRITERS)]
    kills = 0

    def finished(index: int) -> bool:
        start, count = ranges[index]
        return _last_done(logs[index]) >= start + count - 1

    def sample() -> None:
        for name in ("harness-context", "harness-state"):
            try:
                descriptor = os.open(seat / name, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                samples.append((name, os.read(descriptor, 1 << 20)))
            finally:
                os.close(descriptor)

    try:
        while not all(finished(index) for index in range(WRITERS)):
            sample()
            for index, process in enumerate(processes):
                if process.poll() is not None and not finished(index):
                    if process.returncode not in (0, -signal.SIGKILL):
                        evidence.append(f"writer {index} exited {process.returncode}: "
                                        f"{process.stderr.read().decode()[-800:]}")
                        raise AssertionError("\n".join(evidence))
                    processes[index] = spawn(index)
            if kills < kills_wanted:
                index = generator.randrange(WRITERS)
                if not finished(index) and processes[index].poll() is None:
                    target = _progress(logs[index]) + generator.randint(1, max(2, writes // kills_wanted))
                    poll_for(lambda: _progress(logs[index]) >= target or processes[index].poll() is not None,
                             timeout=30, step=0.001)
                    if processes[index].poll() is None:
                        processes[index].send_signal(signal.SIGKILL)
                        processes[index].wait()
                        kills += 1
        for process in processes:
            process.wait(timeout=60)
        sample()
        # A fresh writer of the same session writes once more: it must sweep what the killed left.
        final = subprocess.run([sys.executable, str(HERE / "record_writer.py"), str(seat), str(base / "final.log"),
                                str(WRITERS * writes), "2", token, str(seq)], env=environment, cwd=REPO,
                               capture_output=True, text=True, timeout=60)
        if final.returncode != 0:
            raise AssertionError(final.stderr)
        sample()
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    announced: dict[str, list[str]] = {"ctx": [], "state": []}
    for log in [*logs, base / "final.log"]:
        for line in log.read_text().splitlines():
            kind, _, digest = line.partition(" ")
            if kind in announced:
                announced[kind].append(digest)
    torn = 0
    for kind, digests in announced.items():
        if len(digests) != len(set(digests)):
            torn += len(digests) - len(set(digests))
            evidence.append(f"{kind}: {len(digests) - len(set(digests))} publications repeat earlier bytes")
    known = {"harness-context": set(announced["ctx"]), "harness-state": {*announced["state"], claimed}}
    decoders = {"harness-context": harness_context.decode, "harness-state": harness_state.decode}
    seen = set()
    for name, data in samples:
        digest = hashlib.sha256(data).hexdigest()
        if (name, digest) in seen:
            continue
        seen.add((name, digest))
        try:
            decoders[name](data)
        except Exception as error:
            torn += 1
            evidence.append(f"{name}: sampled bytes do not decode ({error}): {data[:120]!r}")
            continue
        if digest not in known[name]:
            torn += 1
            evidence.append(f"{name}: sampled bytes no writer announced: {data[:120]!r}")
    residue = 0
    for entry in os.listdir(seat):
        if entry not in EXPECTED_FILES and entry != "agent.kdl":
            residue += 1
            evidence.append(f"residue beside the records: {seat / entry}")
    control = base / "c" / ".st2"
    for staging in (control / harness_context.STAGING_NAME, control / harness_state.STAGING_NAME):
        for entry in (os.listdir(staging) if staging.is_dir() else []):
            residue += 1
            evidence.append(f"residue in staging: {staging / entry}")
    landed = sum(1 for name, _ in seen)
    return Verdict("records-under-kill", {"torn": torn, "residue": residue}, evidence,
                   {"writers": WRITERS, "writes_each": writes, "kills": kills,
                    "announced": sum(len(v) for v in announced.values()), "distinct_samples": landed})
