"""opencode's own TUI in a forked wrapper's pane: run by the pane's ``/bin/sh`` anchor.

A default opencode seat (``view "attach"``) shows ``opencode attach`` on the served session.
The TUI needs the pane as its controlling terminal and its process group as the terminal's
foreground group (raw mode, SIGWINCH on a resize), which a wrapper forked by the seat host
(its own session, :mod:`st2.seathost.session_fork`) cannot give a child. So the pane anchor
runs it: :data:`ANCHOR` is :data:`st2.drivers.session_handoff.ANCHOR` (its prologue,
:data:`st2.drivers.pane_anchor.ANCHOR_PROLOGUE`) with two requests the
wrapper may send on the status socket (descriptor 3), each answered with one line on a pipe
(descriptor 4; the anchor never writes descriptor 3, whose readability — its end closing — is
the wrapper's SIGTERM):

- ``attach <port> <session-id> <password>`` → ``attached <pid>``: the anchor starts
  ``<opencode> attach http://127.0.0.1:<port> --session <session-id>`` with
  ``OPENCODE_SERVER_PASSWORD`` set, the pane's terminal as its stdin, stdout and stderr and no
  other descriptor of the anchor's, in the pane's session and foreground group. ``refused``
  when a TUI is still unreaped or a word is out of shape (digits; ``ses_`` and base-62;
  lowercase hex): nothing the wrapper sends is ever run as shell text, only passed as quoted
  words to the executable named when the anchor was exec'd (the pane's own argv).
- ``reap`` → ``detached <status>`` (``$?`` of the TUI, ``none`` if none ran).

The wrapper side, :class:`AnchoredTui`, is the subset of :class:`subprocess.Popen` the opencode
session uses for its attached TUI: it watches the TUI through a pidfd (readable once it has
exited, fenced against PID reuse: the TUI is the anchor's unreaped child when it is opened),
signals it through that pidfd, and reaps it through the anchor. The shell runs the TUI as an
asynchronous list, so it starts with SIGINT and SIGQUIT ignored (POSIX, for a shell without job
control); opencode's TUI reads the keyboard in raw mode, where ^C is a key, not a signal.

What forking a default-view seat saves: docs/memory.md §Native wrappers forked onto their pane's
terminal.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time

from st2.drivers.pane_anchor import ANCHOR_PROLOGUE, KILLED_STATUS, AnchorChannel, anchor_channel


ANCHOR = (
    'oc=$3 t=\n'
    'exec 5<&0\n'
    + ANCHOR_PROLOGUE +
    'while :; do\n'
    '    s=\n'
    "    if IFS=' ' read -r verb a b c <&3; then\n"
    '        case $verb in\n'
    '            status)\n'
    "                case $b$c in '') case $a in [0-9]|[0-9][0-9]|[0-9][0-9][0-9]) exit \"$a\";; esac;; esac\n"
    '                exit 137;;\n'
    '            attach)\n'
    '                r=refused\n'
    '                if [ -z "$t" ]; then\n'
    "                    case $a in ''|*[!0-9]*) ;; *)\n"
    '                    case $b in ses_|ses_*[!0-9A-Za-z]*) ;; ses_*)\n'
    "                    case $c in ''|*[!0-9a-f]*) ;; *)\n"
    '                        OPENCODE_SERVER_PASSWORD=$c "$oc" attach "http://127.0.0.1:$a" --session "$b" '
    '<&5 3<&- 4>&- 5<&- &\n'
    '                        t=$!\n'
    '                        r="attached $t";;\n'
    '                    esac;; esac;; esac\n'
    '                fi\n'
    '                echo "$r" >&4;;\n'
    '            reap)\n'
    '                r=none\n'
    '                if [ -n "$t" ]; then\n'
    '                    while :; do s=; wait "$t"; r=$?; [ -n "$s" ] || break; done\n'
    '                    t=\n'
    '                fi\n'
    '                echo "detached $r" >&4;;\n'
    '            *) exit 137;;\n'
    '        esac\n'
    '        continue\n'
    '    fi\n'
    '    [ -n "$s" ] || exit 137\n'
    'done\n'
)
"""``$1`` the wrapper's PID, ``$2`` a stop signal to relay at once (or empty), ``$3`` the opencode
executable; descriptor 3 the anchor's end of the status socket, 4 the write end of the reply pipe."""

def _monotonic() -> float:
    return time.monotonic()


class AnchoredTui:
    """The TUI the pane anchor runs: ``pid``, ``returncode``, ``poll``, ``wait``, ``terminate``,
    ``kill`` as :class:`subprocess.Popen` has them (``returncode`` negative for a signal)."""

    def __init__(self, channel: AnchorChannel, pid: int, pidfd: int) -> None:
        self.channel, self.pid, self.pidfd = channel, pid, pidfd
        self.returncode: int | None = None
        self.args = ["opencode", "attach"]

    def _exited(self, seconds: float) -> bool:
        try:
            ready, _, _ = select.select([self.pidfd], [], [], seconds)
        except InterruptedError:
            return False
        return bool(ready)

    def _reap(self) -> int:
        answer = self.channel.ask("reap")
        os.close(self.pidfd)
        words = (answer or "").split()
        status = KILLED_STATUS
        if len(words) == 2 and words[0] == "detached" and words[1].isdigit():
            status = int(words[1])
        self.returncode = -(status - 128) if 128 < status < 128 + 65 else status
        return self.returncode

    def poll(self) -> int | None:
        if self.returncode is None and self._exited(0):
            self._reap()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:
            return self.returncode
        deadline = None if timeout is None else _monotonic() + timeout
        while not self._exited(1.0 if deadline is None else max(0.0, min(1.0, deadline - _monotonic()))):
            if deadline is not None and _monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
        return self._reap()

    def send_signal(self, number: int) -> None:
        if self.returncode is None:
            try:
                signal.pidfd_send_signal(self.pidfd, number)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start(port: int, session_id: str, password: str) -> AnchoredTui:
    """Ask the anchor to run the TUI; OSError when it refuses or does not answer."""
    channel = anchor_channel()
    if channel is None:
        raise OSError("no pane anchor runs the TUI for this wrapper")
    answer = channel.ask(f"attach {port} {session_id} {password}")
    words = (answer or "").split()
    if len(words) != 2 or words[0] != "attached" or not words[1].isdigit():
        raise OSError(f"the pane anchor did not start it ({answer or 'no answer'})")
    pid = int(words[1])
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        channel.ask("reap")
        raise
    return AnchoredTui(channel, pid, pidfd)


