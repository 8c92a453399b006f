"""How a task is detached from the supervisor.

Tasks never share the supervisor's process group, session or cgroup, so stopping or killing the
supervisor (or its systemd unit) cannot cascade into them. Where a systemd user manager is
reachable a task starts in its own transient scope (``systemd-run --user --scope --collect
--quiet``, which execs the command in place, so the PID we see is the task's); otherwise
``setsid`` (a new session and process group) gives the same separation.

``ST2_TRANSPORT=setsid`` forces the plain form (tests use it); ``ST2_TRANSPORT=systemd`` insists
on a scope. Without either, a scope is used only when the user manager's private socket exists
and ``systemd-run`` is on PATH.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def user_manager_reachable() -> bool:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if not runtime:
        return False
    return Path(runtime, "systemd", "private").exists() and shutil.which("systemd-run") is not None


def prefix(runtime_id: str) -> list[str]:
    """The argv prefix that starts a task in its own scope, or ``[]`` for plain setsid (the
    caller always passes ``start_new_session=True``)."""
    choice = os.environ.get("ST2_TRANSPORT", "")
    if choice == "setsid":
        return []
    if choice == "systemd" or user_manager_reachable():
        unit = "st2-task-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in runtime_id)
        return ["systemd-run", "--user", "--scope", "--collect", "--quiet", f"--unit={unit}-{os.getpid()}-{os.urandom(3).hex()}", "--"]
    return []
