"""Prompt exit detection for every running task, children or not.

A pidfd (``os.pidfd_open``) becomes readable when its process exits, for any process — adopted
tasks and tmux panes included, which a supervisor can never ``waitpid``. The loop polls these
alongside its other wake-ups, so a crashing task is seen at once instead of at the next interval.
Where pidfds are unavailable (old kernels, other systems) nothing is tracked and the timer and
SIGCHLD remain the wake-ups.
"""

from __future__ import annotations

import os

from st2.process.identity import ProcessIdentity, same_start, observe

# Leave most of the descriptor table to tasks' own needs (and tmux clients).
MAXIMUM_TRACKED = 800


class ExitWatch:
    def __init__(self) -> None:
        self.available = hasattr(os, "pidfd_open")
        self.tracked: dict[str, tuple[ProcessIdentity, int]] = {}

    def track(self, running: dict[str, ProcessIdentity]) -> bool:
        """Track exactly ``running`` (runtime id -> identity): open descriptors for new ones,
        close the ones no longer running or whose identity changed. Return True when one of
        ``running`` is already gone (it exited after the pass saw it): run a pass now."""
        gone = False
        for runtime_id in list(self.tracked):
            identity, descriptor = self.tracked[runtime_id]
            if running.get(runtime_id) != identity:
                os.close(descriptor)
                del self.tracked[runtime_id]
        if not self.available:
            return False
        for runtime_id, identity in running.items():
            if runtime_id in self.tracked or len(self.tracked) >= MAXIMUM_TRACKED:
                continue
            try:
                descriptor = os.pidfd_open(identity.pid)
            except OSError:
                continue
            # The PID could have been reused between the pass's check and this open.
            current = observe(identity.pid)
            if current is None or not same_start(current.start_time, identity.start_time):
                os.close(descriptor)
                gone = True
                continue
            self.tracked[runtime_id] = (identity, descriptor)
        return gone

    def descriptors(self) -> list[int]:
        return [descriptor for _, descriptor in self.tracked.values()]

    def close(self) -> None:
        """Close every descriptor."""
        self.track({})
