"""Finding the processes that carry one exact environment entry: the eval's sweep for anything
its run left behind. Every process an eval starts inherits ``ST2_EVAL_RUN=<its temp directory>``,
so a process of this user whose ``/proc/<pid>/environ`` holds that entry was started by that eval
(or by one of its children) and by nothing else. Linux ``/proc`` only. Standard library only."""

from __future__ import annotations

import os


def processes_carrying(name: str, value: str) -> list[int]:
    """The PIDs of this user's live processes (zombies excluded, this process excluded) whose
    environment holds ``name=value`` exactly. Unreadable processes are skipped."""
    entry = f"{name}={value}".encode()
    found = []
    me = os.getpid()
    for word in os.listdir("/proc"):
        if not word.isdigit() or int(word) == me:
            continue
        try:
            with open(f"/proc/{word}/environ", "rb") as handle:
                environ = handle.read()
            with open(f"/proc/{word}/stat", "rb") as handle:
                state = handle.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and entry in environ.split(b"\0"):
            found.append(int(word))
    return sorted(found)
