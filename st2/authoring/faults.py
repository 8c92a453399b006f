"""A test-only fault seam: ``ST2_TEST_CRASH_AT=<step>`` SIGKILLs the process at that named step
of an authoring transaction, so the crash-safety proofs kill it exactly between two effects.
Unset (always, outside tests), :func:`checkpoint` does nothing."""

from __future__ import annotations

import os
import signal

CRASH_AT_ENV = "ST2_TEST_CRASH_AT"


def checkpoint(step: str) -> None:
    if os.environ.get(CRASH_AT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
