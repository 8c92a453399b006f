"""One command of an eval (a ``run`` step, an ``exec`` judge, an ``st2`` call), held as a process group.

:func:`run_command` runs ``argv`` in a new session (so a group led by it), its stdout
and stderr to the two files named, and waits until it exits, the deadline passes or ``stop()``
says the eval was interrupted. Then the whole group is ended (SIGTERM, and SIGKILL after a short
grace), so a background child the command left in its group never outlives the step. Standard
library only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import namedtuple
from pathlib import Path

GRACE_SECONDS = 2.0
POLL_SECONDS = 0.05

Outcome = namedtuple("Outcome", ("status", "timed_out", "interrupted"))


def run_command(argv: list[str], *, cwd: Path, env: dict[str, str], stdout: Path, stderr: Path,
                deadline: float, stop) -> Outcome:
    """Run ``argv`` until it exits or ``deadline`` (a ``time.monotonic()`` value) passes.
    ``status`` is its exit status (a negative signal number when killed), None when it did not end."""
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        child = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                 stderr=err, start_new_session=True)
    timed_out = interrupted = False
    while child.poll() is None:
        if stop():
            interrupted = True
            break
        if time.monotonic() >= deadline:
            timed_out = True
            break
        time.sleep(POLL_SECONDS)
    end_group(child.pid)
    status = child.wait()
    return Outcome(status=None if (timed_out or interrupted) else status, timed_out=timed_out,
                   interrupted=interrupted)


def end_group(group_id: int) -> None:
    """End process group ``group_id``: SIGTERM, then SIGKILL to what remains after the grace."""
    try:
        os.killpg(group_id, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        try:
            os.waitpid(group_id, os.WNOHANG)  # reap the leader if it is our child
        except ChildProcessError:
            pass
        try:
            os.killpg(group_id, 0)
        except ProcessLookupError:
            return
        time.sleep(POLL_SECONDS)
    try:
        os.killpg(group_id, signal.SIGKILL)
    except ProcessLookupError:
        pass
