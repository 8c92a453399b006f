"""Whether a PID or process group exists, by signal 0: the one check behind the staging sweep,
the liveness reader's no-/proc fallback and the process-group reaper. Existence only — a PID's
identity (its start time) is :mod:`st2.process.identity`'s question. Standard library only."""

from __future__ import annotations

import os


def pid_exists(pid: int) -> bool:
    """True when a process ``pid`` exists (a zombie counts; another user's process counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OSError:
        return False
    return True


def group_exists(group_id: int) -> bool:
    """True when process group ``group_id`` has a member (another user's counts)."""
    if group_id <= 0:
        return False
    try:
        os.killpg(group_id, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True
