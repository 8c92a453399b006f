"""What every pane anchor shares (the anchors: :mod:`st2.drivers.session_handoff`, a driver's
own such as :mod:`st2.drivers.opencode.attach_anchor`): the shell prologue that relays the stop
signals, and the forked wrapper's request channel to an anchor that answers requests.

The relay has one window besides the instant between ``execve`` and the traps: dash acts on a
trapped signal at its next look for pending traps, and its ``read`` builtin looks only when the
read(2) returns. A SIGTERM or SIGHUP that lands after the anchor's last look and before it
enters the read (a few microseconds after each answer it writes, and once after the traps are
set) waits in the shell until the next request line or the wrapper's end. Measured with the
anchor's own loop on a 2-core machine: 96 of 1,000 SIGTERMs sent within 50 µs of an answer
were not relayed. The supervisor's stop does not depend on the relay: it SIGKILLs the pane's
group after its grace, the wrapper hears the anchor's end as its SIGTERM and runs the same stop
path, and the pane reports 137 instead of the wrapper's status.

Standard library only.
"""

from __future__ import annotations

import os

KILLED_STATUS = 137
"""An anchor's exit when its wrapper's stream ended without a status (the wrapper was killed)."""
ANCHOR_PROLOGUE = (
    'w=$1\n'
    'trap \'s=1; kill -TERM "$w" 2>/dev/null\' TERM\n'
    'trap \'s=1; kill -HUP "$w" 2>/dev/null\' HUP\n'
    "trap '' INT\n"
    'case $2 in TERM|HUP) kill -"$2" "$w" 2>/dev/null;; esac\n'
)
"""Every pane anchor's start: the relay traps, ^C ignored, a stop signal from the hand-off relayed."""
ANSWER_SECONDS = 5.0
"""How long a forked wrapper waits for its pane anchor's answer to one request."""
_channel: "AnchorChannel | None" = None


def adopt_channel(request_fd: int, reply_fd: int) -> None:
    """Called in a forked wrapper whose pane anchor answers requests (one on ``reply_fd``)."""
    global _channel
    _channel = AnchorChannel(request_fd, reply_fd)


def anchor_channel() -> "AnchorChannel | None":
    """This forked wrapper's channel to a pane anchor that answers requests, or None."""
    return _channel


class AnchorChannel:
    """Requests to the pane anchor as lines on the status socket, each answered with one line on
    the reply pipe. The anchor never writes the socket, so the wrapper's end still becomes
    readable (its SIGTERM, :mod:`st2.seathost.session_fork`) only when the anchor's end closes.
    A request left unanswered breaks the channel: a late answer could pass for the next one's."""

    def __init__(self, request_fd: int, reply_fd: int) -> None:
        self.request_fd, self.reply_fd = request_fd, reply_fd
        self.pending = b""
        self.broken = False

    def ask(self, line: str, seconds: float = ANSWER_SECONDS) -> str | None:
        """Send one request line and return the anchor's one-line answer (None: no answer in
        ``seconds`` or the anchor is gone)."""
        if self.broken:
            return None
        self.broken = True
        try:
            os.write(self.request_fd, line.encode() + b"\n")
        except OSError:
            return None
        import select
        import time

        deadline = time.monotonic() + seconds
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                ready, _, _ = select.select([self.reply_fd], [], [], left)
                if not ready:
                    return None
                chunk = os.read(self.reply_fd, 4096)
            except InterruptedError:
                continue
            except OSError:
                return None
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        self.broken = False
        return line.decode(errors="replace")
