"""``st2 driver pi-session --identity I --runtime-id R -- pi …``: the pi wrapper, the command
inside a pi seat's PTY task — the channel wrapper (:class:`st2.drivers.channel.session.ChannelSession`)
with pi's extension (``hooks/pi-channel.ts``) and pi's resume (``--session <file>``). pi has no
launch gate (its package declares none).
"""

from __future__ import annotations

import os
from pathlib import Path

from st2.drivers.channel.session import ChannelSession
from st2.drivers.channel.session import run_session as run_channel_session
from st2.drivers.pi import HARNESS


class PiSession(ChannelSession):
    harness = HARNESS
    label = "pi-session"
    extension = "pi-channel.ts"

    def resume_argv(self, session_id: str) -> list[str]:
        """``pi … --session <session file>`` (0.73.1 opens a path as is; an accepted one is absolute,
        so it never reads as an option)."""
        return [*self.argv, "--session", session_id]

    def sessions_directories(self) -> tuple[str, ...]:
        """The harness's own session directories for this wrapper's working directory (the
        harness's: it inherits it)."""
        from st2.drivers.session_ids import pi_sessions_directory

        return (pi_sessions_directory(self.environment, os.getcwd()),)


def run_session(catalog: Path, identity: str, runtime_id: str | None, argv: list[str], clock=None) -> int:
    """The ``pi-session`` verb's core (:func:`st2.drivers.child_session.run_child_session`)."""
    return run_channel_session(catalog, identity, runtime_id, argv, clock, PiSession)
