"""The process entry (:func:`st2.entry.console`): a click-free route's verb ends the process
without interpreter finalization once its output is flushed, and takes the ordinary exit whenever
something would run at exit. The observable of "no finalization" is a ``__del__`` on a global of
``__main__``: finalization clears ``__main__`` and runs it; ``os._exit`` does not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import REPO

pytestmark = pytest.mark.process

PROBE = """
import sys
MARKER = sys.argv[1]
class Finalized:
    def __del__(self, open=open, marker=MARKER):  # bound now: finalization clears the globals
        with open(marker, "w") as handle:
            handle.write("finalized")
kept = Finalized()
if sys.argv[2] == "atexit":
    import atexit
    atexit.register(lambda: sys.stderr.write("atexit ran\\n"))
sys.argv = ["st2", *sys.argv[3:]]
from st2.entry import console
console()
"""


def probe(tmp_path: Path, mode: str, *words: str) -> tuple[subprocess.CompletedProcess, bool]:
    marker = tmp_path / "finalized"
    # Buffered streams, as a harness runs a hook: PYTHONUNBUFFERED would hide a missing flush.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    completed = subprocess.run([sys.executable, "-c", PROBE, str(marker), mode, *words], cwd=REPO,
                               capture_output=True, text=True, timeout=60, env=env)
    return completed, marker.exists()


HELP = ("hook", "subagent-stop-liveness", "--help")


def test_a_hot_path_exits_unfinalized_with_its_output_flushed(tmp_path: Path) -> None:
    completed, finalized = probe(tmp_path, "plain", *HELP)
    assert completed.returncode == 0
    # Written with sys.stdout.write and never flushed by the verb: a pipe is block-buffered,
    # so only the entry's flush puts it there.
    assert completed.stdout.startswith("``st2 hook subagent-stop-liveness``: the SubagentStop turn-end liveness hook.")
    assert not finalized


def test_an_atexit_handler_takes_the_ordinary_exit(tmp_path: Path) -> None:
    """The non-firing twin: with a handler registered the process finalizes, and the handler runs."""
    completed, finalized = probe(tmp_path, "atexit", *HELP)
    assert completed.returncode == 0
    assert completed.stdout.startswith("``st2 hook subagent-stop-liveness``")
    assert completed.stderr == "atexit ran\n"
    assert finalized


def test_the_exit_status_and_stderr_survive_the_fast_exit(tmp_path: Path) -> None:
    completed, finalized = probe(tmp_path, "plain", "driver", "claude-observe", "--identity", "h.w")
    assert completed.returncode == 2
    assert completed.stderr.startswith("st2 claude-observe: --event is required\nusage: st2 driver claude-observe")
    assert not finalized
