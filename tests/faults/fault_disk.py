"""Campaign part 5 — disk full, inodes exhausted, read-only.

For each fault a fresh small tmpfs is mounted as the catalog (root only; unmounted in finally),
a supervised fleet runs on it (a PTY seat with an exec task, a peer seat; the host-local runtime
state stays on the ordinary disk), every record a writer keeps is put in place (presence,
harness-context, harness-state, a message, the declarations), and then the fault is made: the
filesystem filled block by block, its inode table filled file by file, or remounted read-only.
Then every writer a user or agent runs is run against it, the supervisor keeps passing (a 1 s
interval), it is stopped and ``st2 up --once`` adopts, and ``st2 doctor`` is asked.

- corrupted: a record or message whose bytes changed under a writer that failed, one that no
  longer decodes, a temp file left beside a record, or a live task whose PID or start time
  changed (the supervisor must keep its agents running);
- tracebacks: a Python traceback printed by any command or by the supervisor.

Also kept per case (asserted by the tier, case by case): a failing writer exits non-zero with one
line on stderr naming the fault (``unclear``), and Doctor names the fault (``doctor_missed``).
``RESULT corrupted=<n> tracebacks=<n>``.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
from pathlib import Path

from fault_common import Verdict, poll_for
from supervisor_support import Fleet, NotifyListener

FAULTS = ("disk-full", "inodes-exhausted", "read-only")
DOCTOR_PHRASE = {"disk-full": "has no space left", "inodes-exhausted": "has no free inodes",
                 "read-only": "is mounted read-only"}
ERROR_TEXT = {"disk-full": os.strerror(errno.ENOSPC), "inodes-exhausted": os.strerror(errno.ENOSPC),
              "read-only": os.strerror(errno.EROFS)}
MARKER = 20_000_000 + (os.getpid() % 100_000) * 10
WRITERS = ("status-set", "message-send", "message-reply", "message-archive", "agent-desired-state")


def is_root() -> bool:
    return os.geteuid() == 0


def _fill_blocks(directory: Path) -> None:
    for size in (1 << 20, 1 << 12, 1):
        index = 0
        while True:
            try:
                with open(directory / f"fill-{size}-{index}", "wb") as handle:
                    handle.write(b"\0" * size)
                    handle.flush()
                    os.fsync(handle.fileno())
            except OSError as error:
                if error.errno not in (errno.ENOSPC,):
                    raise
                break
            index += 1


def _fill_inodes(directory: Path) -> None:
    index = 0
    while True:
        try:
            os.close(os.open(directory / f"inode-{index}", os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as error:
            if error.errno != errno.ENOSPC:
                raise
            return
        index += 1


def _snapshot(catalog: Path) -> dict[str, bytes]:
    """Every record, message and declaration under ``agents/``, by path."""
    files = {}
    for path in (catalog / "agents").rglob("*"):
        if path.is_file() and not path.name.startswith(".") :
            files[str(path.relative_to(catalog))] = path.read_bytes()
    return files


def _decodes(relative: str, data: bytes) -> str | None:
    """Why ``data`` at ``relative`` is not a whole record of its kind (None when it is)."""
    from st2.bus.envelope import parse
    from st2.records import harness_context, harness_state

    name = Path(relative).name
    try:
        if name == "harness-context":
            harness_context.decode(data)
        elif name == "harness-state":
            harness_state.decode(data)
        elif name == "status":
            if data.split(b"\n")[0].decode() not in ("available", "busy", "away", "dnd", "offline"):
                return "not a presence word"
        elif name.endswith(".md"):
            parse(name, data)
        elif name == "agent.kdl":
            if not data.rstrip().endswith(b"}"):
                return "truncated declaration"
    except Exception as error:  # noqa: BLE001 - any failure to decode is the finding
        return f"{type(error).__name__}: {error}"
    return None


def _residue(catalog: Path) -> list[str]:
    return [str(path) for path in (catalog / "agents").rglob("*.tmp")]


def _prepare(fleet: Fleet) -> str:
    """Every record in place; returns the filename of the message waiting in worker's inbox."""
    from st2.base.clock import SYSTEM_CLOCK
    from st2.records import harness_context, harness_state

    seat = fleet.catalog / "agents" / "h" / "worker"
    assert fleet.st2("status", "worker", "--set", "busy").returncode == 0
    token = harness_state.session_token()
    sequence = harness_state.claim(seat, "h.worker", "claude", token, SYSTEM_CLOCK)
    harness_state.Writer(seat, "h.worker", "claude", SYSTEM_CLOCK, pty_session="h.worker", incarnation=token,
                         claimed_seq=sequence).observe("idle", input_buffer="empty")
    harness_context.Writer(seat, "h.worker", "claude", token, SYSTEM_CLOCK).publish(
        harness_context.Reading(used_tokens=1000, window_tokens=200000, used_percent=0.5, model="m"))
    sent = fleet.st2("message", "send", "worker", "--as", "h.peer", "--subject", "before", "-m", "kept")
    assert sent.returncode == 0, sent.stderr
    return sorted(os.listdir(seat / "resources" / "inbox"))[-1]


def _writer_argv(name: str, filename: str) -> list[str]:
    return {
        "status-set": ["status", "worker", "--set", "dnd"],
        "message-send": ["message", "send", "worker", "--as", "h.peer", "--subject", "during", "-m", "lost?"],
        "message-reply": ["message", "reply", filename, "--as", "h.worker", "-m", "answer"],
        "message-archive": ["message", "archive", filename, "--as", "h.worker"],
        "agent-desired-state": ["agent", "desired-state", "peer", "suspended", "--reason", "disk fault"],
    }[name]


def _judge(case: str, fault: str, result, before: dict, catalog: Path, outcome: dict, evidence: list) -> None:
    output = (result.stdout or "") + (result.stderr or "")
    after = _snapshot(catalog)
    traceback = "Traceback (most recent call last)" in output
    lines = [line for line in (result.stderr or "").splitlines() if line.strip()]
    corrupted = []
    if result.returncode != 0:
        corrupted += [f"{path} changed or vanished" for path, data in before.items() if after.get(path) != data]
        corrupted += [f"{path} appeared" for path in after if path not in before]
        clear = len(lines) == 1 and ERROR_TEXT[fault] in lines[0] and not traceback
    else:
        clear = True          # it succeeded (a rename needs no new block): what it wrote must be whole
    corrupted += [f"{path}: {why}" for path, data in after.items() if (why := _decodes(path, data))]
    corrupted += [f"temp residue {path}" for path in _residue(catalog)]
    outcome[case] = {"exit": result.returncode, "traceback": traceback, "clear": clear, "corrupted": len(corrupted)}
    if traceback or not clear or corrupted:
        evidence.append(f"{case}: exit {result.returncode}, {len(lines)} stderr line(s): "
                        f"{(result.stderr or '')[-300:]!r} {corrupted[:3]}")


def _one_fault(base: Path, fault: str, outcomes: dict, evidence: list) -> None:
    from st2.process.identity import observe

    catalog = base / "c"
    catalog.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,nr_inodes=4000,mode=0755", "tmpfs", str(catalog)],
                   check=True, capture_output=True)
    fleet = None
    listener = None
    logs = catalog / "logs"
    try:
        # Exec logs on their own mount: a task's open log is a writer that would keep the
        # catalog from being remounted read-only (and stays writable for the agents anyway).
        logs.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(logs)], check=True, capture_output=True)
        fleet = Fleet(base)
        for identity, body in (("worker", f'    argv "sleep" "{MARKER}"\n    exec "side" {{ argv "sleep" "{MARKER + 1}"; }}'),
                               ("peer", f'    argv "sleep" "{MARKER + 2}"')):
            seat = catalog / "agents" / "h" / identity      # written in place: the catalog is its own mount
            seat.mkdir(parents=True)
            (seat / "agent.kdl").write_text(f'agent "{identity}" {{\n{body}\n}}\n')
        listener = NotifyListener(base / "notify")     # one STATUS line per finished pass
        fleet.up("--interval", "1s", env={**fleet.env, "NOTIFY_SOCKET": str(listener.path)})
        live = poll_for(lambda: (lambda r: r if len(r) == 3 else None)(fleet.running()), timeout=60, step=0.05)
        if not live:
            raise AssertionError(f"{fault}: the fleet never came up: {fleet.log()[-2000:]}")
        filename = _prepare(fleet)
        filler = catalog / ".st2" / "fault-filler"
        filler.mkdir(parents=True, exist_ok=True)
        if fault == "disk-full":
            _fill_blocks(filler)
        elif fault == "inodes-exhausted":
            _fill_inodes(filler)
        else:
            # The supervisor holds its host lock open for writing, so it stops first (its agents
            # keep running); a read-only catalog must not be started on either.
            listener.collect()      # drained, so its sd_notify never blocks the way out
            fleet.supervisors[-1].send_signal(signal.SIGTERM)
            fleet.supervisors[-1].wait(timeout=30)
            subprocess.run(["mount", "-o", "remount,ro", str(catalog)], check=True, capture_output=True)
        for name in WRITERS:
            before = _snapshot(catalog)
            result = fleet.st2(*_writer_argv(name, filename))
            _judge(f"{fault}/{name}", fault, result, before, catalog, outcomes, evidence)
        supervisor = fleet.supervisors[-1]
        if fault != "read-only":
            # Two whole passes on the faulty filesystem, or the supervisor's end, whichever first.
            passes = listener.passes()
            poll_for(lambda: supervisor.poll() is not None or listener.passes() >= passes + 2, timeout=30)
            if supervisor.poll() is None and listener.passes() < passes + 2:
                evidence.append(f"{fault}: the supervisor ran no pass on the faulty filesystem")
                outcomes[f"{fault}/passes"] = {"exit": 1, "traceback": False, "clear": False, "corrupted": 0}
        alive = supervisor.poll() is None or fault == "read-only"
        supervisor_log = fleet.log()
        changed = {rid for rid, identity in live.items() if fleet.running().get(rid) != identity}
        if supervisor.poll() is None:
            listener.collect()
            supervisor.send_signal(signal.SIGTERM)
            supervisor.wait(timeout=30)
        before = _snapshot(catalog)
        once = fleet.st2("up", "--once")
        _judge(f"{fault}/up-once", fault, once, before, catalog, outcomes, evidence)
        changed |= {rid for rid, identity in live.items() if fleet.running().get(rid) != identity}
        doctor = fleet.st2("doctor")
        named = f"filesystem: the catalog filesystem at {catalog} {DOCTOR_PHRASE[fault]}" in doctor.stdout
        outcomes[f"{fault}/supervisor"] = {"exit": 0 if alive else 1, "traceback": "Traceback" in supervisor_log,
                                           "clear": alive, "corrupted": len(changed)}
        outcomes[f"{fault}/doctor"] = {"exit": doctor.returncode, "traceback": "Traceback" in doctor.stdout + doctor.stderr,
                                       "clear": named, "corrupted": 0}
        if not alive or changed or "Traceback" in supervisor_log:
            evidence.append(f"{fault}: supervisor alive={alive}, tasks changed={sorted(changed)}: {supervisor_log[-600:]!r}")
        if not named:
            evidence.append(f"{fault}: doctor does not name the fault: {doctor.stdout[-600:]!r}")
        for rid, (pid, _) in live.items():
            if observe(pid) is None:
                evidence.append(f"{fault}: {rid} is gone")
    finally:
        if listener is not None:
            listener.close()
        if fleet is not None:
            fleet.cleanup()
        for mount in (logs, catalog):
            if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
                subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def run(scale: float, base: Path, seed: int = 0) -> Verdict:
    """``scale`` does not apply: each fault is one filesystem, exercised completely."""
    if not is_root():
        return Verdict("disk-faults", {"corrupted": "skipped", "tracebacks": "skipped"},
                       ["SKIPPED: mounting a tmpfs needs root"], {"skipped": True})
    outcomes: dict[str, dict] = {}
    evidence: list[str] = []
    for fault in FAULTS:
        _one_fault(Path(base) / fault, fault, outcomes, evidence)
    corrupted = sum(outcome["corrupted"] for outcome in outcomes.values())
    tracebacks = sum(outcome["traceback"] for outcome in outcomes.values())
    unclear = sorted(case for case, outcome in outcomes.items() if not outcome["clear"])
    return Verdict("disk-faults", {"corrupted": corrupted, "tracebacks": tracebacks}, evidence,
                   {"cases": len(outcomes), "unclear": unclear, "outcomes": outcomes})
