"""Test helpers: the real `st2` CLI as a subprocess, environment, JSON compaction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def st2_env(catalog: Path | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("ST_AGENT", None)
    if catalog is not None:
        env["CATALOG"] = str(catalog)
    env.update(extra)
    return env


CLICK_ONLY = "import sys\nfrom st2.cli import run\nraise SystemExit(run(sys.argv[1:]))\n"
ROUTE_PROBE = ("import sys\nfrom st2.entry import main\nstatus = main(sys.argv[2:])\n"
               "open(sys.argv[1], 'w').write('click' if 'st2.cli' in sys.modules else 'fast')\n"
               "raise SystemExit(status)\n")


def route_commands(probe: Path) -> tuple[list[str], list[str], list[str]]:
    """The three ways a click-free route's test runs st2 on the same words: the entry point
    (``python -m st2``), the click CLI alone (:func:`st2.cli.run`), and the entry point under a
    probe that writes to ``probe`` which route ran (``fast`` when st2.cli was never imported, else
    ``click``) and exits with the verb's status."""
    return ([sys.executable, "-m", "st2"], [sys.executable, "-c", CLICK_ONLY],
            [sys.executable, "-c", ROUTE_PROBE, str(probe)])


def run_st2(*args: str, catalog: Path | None = None, input: str | None = None,
            env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run the real `st2` entry point as a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "st2", *args],
        input=input,
        capture_output=True,
        text=True,
        env=env if env is not None else st2_env(catalog),
        timeout=timeout,
        cwd=REPO,
    )


def compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def poll_for(predicate, what=None, timeout: float = 30.0, step: float = 0.02):
    """The one polling helper of the test suite: call ``predicate()`` every ``step`` seconds until
    it returns a truthy value, and return that value. When ``timeout`` seconds pass first: with
    ``what`` (a description, or a callable returning one, evaluated then), raise AssertionError
    naming it; without, return the last falsy value (for ``assert poll_for(...), context``).
    Tests wait on observable progress this way, never on a bare sleep."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            break
        time.sleep(step)
    if value or what is None:
        return value
    raise AssertionError(f"timed out after {timeout:g}s waiting for {what() if callable(what) else what}")


def exits_within(pid: int, seconds: float) -> bool:
    """True once process ``pid`` (any process, not only a child) has exited, or was already
    gone, within ``seconds``: waits on its pidfd."""
    import select

    try:
        descriptor = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([descriptor], [], [], seconds)[0])
    finally:
        os.close(descriptor)


def kill_tmux_server(socket: str, seconds: float = 10.0) -> None:
    """End the tmux server on ``socket`` and wait for its process to exit. ``kill-server`` returns
    before it has, and while it shuts down the server already answers ``has-session`` with "no
    session", so waiting on that is not enough: a new server started on the same socket in that
    window fails ("server exited unexpectedly", 10 of 200 tries on a quiet machine)."""
    answer = subprocess.run(["tmux", "-S", socket, "display-message", "-p", "#{pid}"], capture_output=True,
                            text=True, timeout=10)
    subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=10)
    if answer.returncode == 0 and answer.stdout.strip().isdigit():
        assert exits_within(int(answer.stdout), seconds), f"the tmux server on {socket} never exited"


def make_seat(catalog: Path, host: str = "host", identity: str = "worker"):
    """A seat directory under ``catalog`` (created) as the drivers' :class:`~st2.drivers.seat.Seat`."""
    from st2.drivers.seat import Seat

    directory = catalog / "agents" / host / identity
    directory.mkdir(parents=True, exist_ok=True)
    return Seat(directory, f"{host}.{identity}")


def record(seat, name: str):
    """The seat's record ``name`` decoded, or None when absent."""
    path = seat.directory / name
    return json.loads(path.read_text()) if path.exists() else None


def dealt(items: list, workers: int, is_long, together=lambda item: None) -> list:
    """``items`` in the order whose ``workers`` contiguous slices, sized as xdist's work-stealing
    scheduler first sizes them (the remainder over the workers still to serve), each begin with a
    round-robin share of the long items; the same order in every worker, as xdist requires. Long
    items with one ``together`` key (not None) are dealt as one unit, to one worker: they share a
    module-scoped fixture that each worker running any of them would otherwise pay again."""
    units: list[list] = []
    keyed: dict = {}
    short = []
    for item in items:
        if not is_long(item):
            short.append(item)
            continue
        key = together(item)
        if key is None:
            units.append([item])
        elif key in keyed:
            keyed[key].append(item)
        else:
            keyed[key] = [item]
            units.append(keyed[key])
    long = [item for unit in units for item in unit]
    if workers <= 1:
        return long + short
    order: list = []
    remaining = len(items)
    placed: set = set()
    for worker in range(workers):
        size = remaining // (workers - worker)
        remaining -= size
        share = [item for unit in units[worker::workers] for item in unit][:size]
        placed.update(id(item) for item in share)
        order += share + short[:size - len(share)]
        del short[:size - len(share)]
    return order + [item for item in long if id(item) not in placed] + short


def start_seat_host(scope: Path) -> subprocess.Popen:
    """A real ``st2 seat-host`` serving ``scope`` (its own process group, logging to
    ``scope/host.log``), returned once it answers on the scope's socket. The caller ends it."""
    from st2.seathost import wire

    with open(scope / "host.log", "ab") as log:
        process = subprocess.Popen([sys.executable, "-m", "st2", "seat-host", "--scope-directory", str(scope)],
                                   stdout=log, stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)

    def serving() -> bool:
        try:
            return wire.request(wire.socket_path(scope), {"op": "hello"}, timeout=1.0).get("pid") == process.pid
        except OSError:
            return False

    poll_for(serving, "the seat host to answer", timeout=30)
    return process


SEED_VARIABLE = "ST2_SIGKILL_SEED"


class FaultSeed:
    """The seed of a test's random fault points (SIGKILL moments, which process dies): taken
    from ``$ST2_SIGKILL_SEED`` when set (to replay a failure's points), else ``default``, else a
    fresh one. Printed at once, so pytest shows it beside a failing test's output, and
    :meth:`reported` adds it to any failure raised inside, so the assertion names the seed
    that reproduces it. ``random`` is the generator the test draws its points from."""

    def __init__(self, default: int | None = None) -> None:
        import random

        value = os.environ.get(SEED_VARIABLE, "").strip()
        if value:
            self.seed = int(value)
        elif default is not None:
            self.seed = default
        else:
            self.seed = random.SystemRandom().randrange(2**32)
        self.random = random.Random(self.seed)
        print(self.line(), flush=True)

    def line(self) -> str:
        return f"random fault points from seed {self.seed}: reproduce with {SEED_VARIABLE}={self.seed}"

    def reported(self):
        """A context in which any exception carries :meth:`line` as a note."""
        import contextlib

        @contextlib.contextmanager
        def reporting():
            try:
                yield self.random
            except Exception as error:
                error.add_note(self.line())
                raise

        return reporting()


def without_guide(text: str) -> str:
    """What a stand-in harness recorded of its argv (``echo "$*"`` or one argument per line), less
    the bus guide every PTY wrapper appends (``--append-system-prompt <guide>``)."""
    from st2.bus.guide import guide_text

    for separator in (" ", "\n"):
        piece = f"--append-system-prompt{separator}{guide_text()}"
        text = text.replace(separator + piece, "").replace(piece + separator, "").replace(piece, "")
    return text


_MODULES_PROBE = """
import sys
sys.argv = ["st2", *sys.argv[1:]]
from st2.entry import main
status = main()
import json as _json
sys.stderr.write("\\nMODULES " + _json.dumps(sorted(sys.modules)) + "\\n")
raise SystemExit(status)
"""


def modules_loaded_by(catalog: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    """Every module ``st2 <args>`` had loaded when it finished, run for real through the entry
    point in a fresh interpreter (it must exit 0)."""
    completed = subprocess.run([sys.executable, "-c", _MODULES_PROBE, *args], env=env or st2_env(catalog),
                               capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    line = next(line for line in completed.stderr.splitlines() if line.startswith("MODULES "))
    return json.loads(line[len("MODULES "):])


def kernel_boot_time() -> int:
    """The kernel's ``btime`` as this moment reads it."""
    with open("/proc/stat") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("btime "))


def boot_id() -> str:
    with open("/proc/sys/kernel/random/boot_id") as handle:
        return handle.read().strip()


def under_boot_time(recorded: Path, command: list[str]) -> list[str]:
    """``command`` run in a private mount namespace where the user's shared boot time file
    (st2.process.proc_stat.shared_path) is ``recorded``, bind-mounted: the way to give st2 processes a
    boot time the kernel no longer reads (a wall clock stepped since it was recorded) without
    touching the file every other st2 process of this host shares. Needs root (CI's user): the
    caller is skipped loudly otherwise, as the machine-fault campaign is."""
    import pytest

    from st2.process import proc_stat

    if os.getuid() != 0:
        pytest.skip("SKIPPED LOUDLY: a private mount namespace with a bind-mounted boot time needs root")

    proc_stat.boot_time()  # the bind mount's target must exist: the first reading creates it
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh",
            str(recorded), proc_stat.shared_path(), *command]
