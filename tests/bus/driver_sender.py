"""A stand-in publisher for the concurrency tests (run as a subprocess, not collected by pytest).

``driver_sender.py senders CATALOG INDEX COUNT`` sends COUNT messages through the real CLI entry
point in this one process (interpreter start-up paid once), then writes ``done`` to stdout.

``driver_sender.py killer CATALOG MODE KILLS SEED`` forks a child that loops over the real CLI
(``send`` plain, ``keyed`` idempotent sends resuming from a progress file, or ``archive``) and
SIGKILLs it after a random delay, KILLS times, then writes ``done``.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import signal
import sys
import time
from pathlib import Path

from st2.entry import main


def cli(catalog: str, *words: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(["--catalog", catalog, *words])


def body_for(label: str) -> str:
    # Large enough that a torn write would be visible: the last line must be END.
    return f"payload {label}\n" + ("x" * 60 + "\n") * 40 + "END\n"


def senders(catalog: str, index: int, count: int) -> None:
    for number in range(count):
        status = cli(catalog, "message", "send", "robert", "--as", f"h1.sender{index}",
                     "--subject", f"s{index}-{number}", "-m", body_for(f"{index}-{number}"))
        if status != 0:
            raise SystemExit(f"send {index}-{number} failed with {status}")


def child_loop(catalog: str, mode: str, progress: Path) -> None:
    if mode == "send":
        while True:
            cli(catalog, "message", "send", "robert", "--as", "h1.alice", "-m", body_for("plain"))
    if mode == "keyed":
        confirmed = [int(x) for x in progress.read_text().split()] if progress.exists() else []
        number = (confirmed[-1] + 1) if confirmed else 0
        while True:
            status = cli(catalog, "message", "send", "robert", "--as", "h1.alice", "--idempotency-key",
                         f"k{number}", "-m", body_for(f"k{number}"))
            if status != 0:
                os._exit(3)
            descriptor = os.open(progress, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            os.write(descriptor, f"{number}\n".encode())
            os.close(descriptor)
            number += 1
    if mode == "in-place":
        # The negative control: a publisher that writes under the final name as it goes.
        from st2.bus.envelope import render
        from st2.bus.filename import new_filename

        inbox = Path(catalog) / "agents/h1/bob/resources/inbox"
        inbox.mkdir(parents=True, exist_ok=True)
        data = render("h1.alice", None, None, (), None, body_for("in-place"))
        while True:
            descriptor = os.open(inbox / new_filename(time.time_ns() // 1_000_000), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            for start in range(0, len(data), 256):
                os.write(descriptor, data[start : start + 256])
                os.fsync(descriptor)
            os.close(descriptor)
    if mode == "archive":
        inbox = Path(catalog) / "agents/h1/bob/resources/inbox"
        while True:
            names = sorted(n for n in os.listdir(inbox) if n.endswith(".md"))
            if not names:
                os._exit(0)
            cli(catalog, "message", "archive", "h1.bob", names[0], "--as", "h1.bob")


def killer(catalog: str, mode: str, kills: int, seed: int) -> None:
    generator = random.Random(seed)
    # Import and warm every module the loop uses before forking, so each child spends its short
    # life publishing rather than importing click.
    cli(catalog, "message", "ls", "h1.bob", "--count")
    # Aim the kills across the whole publication path whatever this machine's fsync costs: the
    # delay is drawn from zero to twice one warm publication of the same kind (to another seat's
    # inbox). If ten kills in a row leave no new file in the inbox — a loaded machine made the
    # path slower than the span — the span grows by half, so the run always makes progress; ten
    # productive kills in a row shrink it back toward the measured floor.
    warm = ["message", "send", "h1.alice", "--as", "h1.bob", "-m", body_for("warm")]
    cli(catalog, *warm)
    started = time.monotonic()
    cli(catalog, *warm, *(["--idempotency-key", "warm"] if mode == "keyed" else []))
    span = min(2 * (time.monotonic() - started), 0.25)
    progress = Path(catalog) / f".progress-{mode}"
    inbox = Path(catalog) / "agents/h1/bob/resources/inbox"
    last_count, stalled, moving, floor = _count(inbox), 0, 0, span
    for _ in range(kills):
        pid = os.fork()
        if pid == 0:
            try:
                child_loop(catalog, mode, progress)
            finally:
                os._exit(0)
        time.sleep(generator.uniform(0.0, span))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        count = _count(inbox)
        if mode == "archive" and count == 0:
            break  # everything is read; further kills would test nothing
        stalled = 0 if count != last_count else stalled + 1
        moving = moving + 1 if count != last_count else 0
        last_count = count
        if stalled >= 10:
            span, stalled = min(span * 1.5, 1.0), 0
        if moving >= 10:  # the machine calmed down: aim at the start of the path again
            span, moving = max(span / 1.5, floor), 0


def _count(directory: Path) -> int:
    try:
        return len(os.listdir(directory))
    except FileNotFoundError:
        return 0


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "senders":
        senders(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    elif command == "killer":
        killer(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    print("done", flush=True)
