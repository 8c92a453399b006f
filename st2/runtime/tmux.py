"""The tmux client command line for a PTY task's own server: one socket per task under the
runtime scope, never the user's tmux configuration, one session of a fixed name. The PTY backend,
the DING notifier's terminal and the demo all address a seat's tmux server through this."""

from __future__ import annotations

from pathlib import Path

SESSION_NAME = "st2"  # the session the PTY backend gives every task


def client_argv(socket: Path | str, *arguments: str) -> list[str]:
    """``tmux -S <socket> -f /dev/null <arguments…>``: a client of the task's own server that
    loads no configuration (``-f /dev/null`` matters when the command starts the server)."""
    return ["tmux", "-S", str(socket), "-f", "/dev/null", *arguments]
