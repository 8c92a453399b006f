"""The pane's side of a native seat's forked wrapper: hand the terminal to the seat host, then
hold the pane as a tiny ``/bin/sh`` anchor (the host's side is
:mod:`st2.seathost.session_fork`).

Why: forked from the host's frozen pages, a Codex or opencode session wrapper shares what the
host imported instead of being an interpreter of its own for the seat's whole life, and the
pane process, which must stay the PTY task (the launch record names its PID and start time,
:mod:`st2.process.identity`; ``exec`` keeps both), is ``sh`` instead of Python (what it saves per
seat: docs/memory.md §Native wrappers forked onto their pane's terminal).

:func:`hand_off` runs in the pane process (``st2 driver codex-session …`` or
``opencode-session …``) when its stdin is a terminal:

1. It asks the scope's seat host of this very build (``hello``) to fork the wrapper
   (``fork-session``) with the pane's stdin/stdout/stderr and one end of a fresh socket pair,
   its argv, environment, working directory, umask and stream encoding.
2. It execs :data:`ANCHOR` — a fixed script, no data interpolated — with the other end as
   descriptor 3 and the wrapper's PID (and a stop signal that arrived during the hand-off) as
   positional parameters. The anchor relays SIGTERM and SIGHUP to the wrapper, ignores SIGINT
   (^C is never the wrapper's end: the wrapper ignores SIGINT; the wrappers use no SIGWINCH),
   waits for the wrapper's ``status N`` line and exits N — the wrapper core's own exit status;
   end of stream without a status (the wrapper was killed) exits 137.
3. The wrapper watches the anchor (the kernel's SIGTERM when its end of the socket closes):
   the pane's death runs the wrapper's stop path.

A stop signal during the hand-off is recorded by a Python handler and passed to the anchor,
which relays it once its traps are set; one in the instant between ``execve`` and the traps
kills the anchor, which the wrapper hears as the anchor's death — the same stop.

An opencode seat in the view that runs opencode's own TUI (the default) is handed off too: the
TUI needs the pane as its controlling terminal, which no forked wrapper can give a child, so
the anchor is the driver's own (:func:`st2.drivers.tui_anchor`: opencode's
:mod:`st2.drivers.opencode.attach_anchor`, the same prologue and the TUI run on the wrapper's
request), with a reply pipe beside the socket (descriptor 4 on both sides,
:class:`st2.drivers.pane_anchor.AnchorChannel`). Not handed off, the wrapper running unforked in
this process: a stdin
that is no terminal (a test's pipe, a replay), ``ST2_SEAT_HOST=off``, and — said once on the
PTY — a socket path past the kernel's bound or no seat host of this build answering.

Standard library, :mod:`st2.seathost.wire` and the driver table's light packages only until it
falls back (then the wrapper's own modules).
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from st2.drivers.pane_anchor import ANCHOR_PROLOGUE

ANCHOR_NAME = "st2-session-anchor"
"""``$0`` of the anchor, so ``/proc/<pid>/cmdline`` names it (the benchmark and tests find the
forked wrapper's PID right after it)."""
ANCHOR = (
    ANCHOR_PROLOGUE +
    'while :; do\n'
    '    s=\n'
    '    if IFS= read -r line <&3; then\n'
    '        case $line in\n'
    '            "status "[0-9]|"status "[0-9][0-9]|"status "[0-9][0-9][0-9]) exit "${line#status }";;\n'
    '        esac\n'
    '        exit 137\n'
    '    fi\n'
    '    [ -n "$s" ] || exit 137\n'
    'done\n'
)
"""The anchor: ``$1`` the wrapper's PID, ``$2`` a stop signal to relay at once (or empty),
descriptor 3 its end of the status socket. A trap interrupts ``read``; the loop then reads
again, so only end of stream (no trap ran) or a status line ends it."""
SHELL = "/bin/sh"
SEAT_HOST_KNOB = "ST2_SEAT_HOST"
SUN_PATH_LINUX = 108
FORK_TIMEOUT_SECONDS = 30.0
"""The host answers one request at a time, and its first ``fork-session`` first preloads the
wrappers (:func:`st2.cli.seat_host.preload_native_wrappers`): a fleet's panes starting at once
queue behind it. A wrapper forked after this gave up hears its anchor's end closed and stops."""


def eligible(name: str, values: dict[str, str]) -> bool:
    """Whether this wrapper verb is handed to the seat host at all."""
    from st2.drivers import native_session_verbs

    if name not in native_session_verbs() or os.environ.get(SEAT_HOST_KNOB, "") == "off":
        return False
    if "." not in values.get("--identity", ""):
        return False
    try:
        return os.isatty(0)
    except OSError:
        return False


def hand_off(name: str, root, values: dict[str, str], words: list[str]) -> None:
    """Fork the wrapper through the seat host and exec the anchor (never returns then); return
    when the wrapper is to run in this process."""
    if not eligible(name, values):
        return
    from st2.runtime.scope import RuntimeScope
    from st2.seathost import wire

    prefix = f"st2 {name}"
    scope = RuntimeScope(root, values["--identity"].split(".", 1)[0])
    path = wire.socket_path(scope.directory)
    if len(os.fsencode(str(path))) + 1 > SUN_PATH_LINUX:
        _say(prefix, f"the seat host socket path {path} exceeds the {SUN_PATH_LINUX}-byte sun_path bound; "
                     "the wrapper runs in this process (its own interpreter)")
        return
    build = wire.build_id()
    try:
        hello = wire.request(path, {"op": "hello"}, timeout=2.0)
    except OSError:
        hello = {}
    if hello.get("protocol") != wire.PROTOCOL or hello.get("build") != build:
        _say(prefix, f"no seat host of this build answers on {path}; the wrapper runs in this process "
                     "(its own interpreter)")
        return
    pending: list[int] = []
    previous = {number: signal.signal(number, lambda number, frame: pending.append(number))
                for number in (signal.SIGTERM, signal.SIGHUP)}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, lambda number, frame: None)
    anchor_end, wrapper_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    # A view that runs the harness's own TUI (opencode's): the anchor runs it (it needs the pane
    # as its controlling terminal), asked on the status socket and answering on this pipe.
    from st2.drivers import tui_anchor

    tui = tui_anchor(name, values)
    replies = os.pipe() if tui else None
    descriptors = (0, 1, 2, wrapper_end.fileno()) + ((replies[0],) if replies else ())
    umask = os.umask(0o077)
    os.umask(umask)
    body = {"op": "fork-session", "argv": list(words), "env": dict(os.environ), "cwd": os.getcwd(),
            "umask": umask, "encoding": sys.stdout.encoding, "errors": sys.stdout.errors, "build": build}
    try:
        answer = wire.request(path, body, descriptors, timeout=FORK_TIMEOUT_SECONDS)
    except OSError as error:
        answer = {"error": str(error)}
    wrapper_end.close()
    if replies:
        os.close(replies[0])
    pid = answer.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        # Whether a wrapper was forked is unknown only when the answer was lost; closing our end
        # stops one that was (it hears the anchor's end close) before this process serves.
        anchor_end.close()
        if replies:
            os.close(replies[1])
        for number, handler in previous.items():
            signal.signal(number, handler)
        _say(prefix, f"the seat host did not fork the wrapper ({answer.get('error')}); the wrapper runs in "
                     "this process (its own interpreter)")
        for number in pending:
            os.kill(os.getpid(), number)
        return
    if replies:
        _exec_anchor(anchor_end, pid, pending, tui, [words[words.index("--") + 1]], replies[1])
    _exec_anchor(anchor_end, pid, pending, ANCHOR)


def _exec_anchor(anchor_end: socket.socket, pid: int, pending: list[int], script: str, extra: list[str] = (),
                 reply: int | None = None) -> None:
    descriptor = anchor_end.detach()
    if reply is not None and reply == 3:   # out of the status socket's way first
        reply = os.dup(reply)
    if descriptor != 3:
        os.dup2(descriptor, 3)
        os.close(descriptor)
    os.set_inheritable(3, True)
    if reply is not None:
        if reply != 4:
            os.dup2(reply, 4)
            os.close(reply)
        os.set_inheritable(4, True)
    relay = {signal.SIGTERM: "TERM", signal.SIGHUP: "HUP"}.get(pending[0], "") if pending else ""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for number in (signal.SIGPIPE, signal.SIGXFSZ):   # as a shell expects them (Python ignores both)
        signal.signal(number, signal.SIG_DFL)
    os.execv(SHELL, [SHELL, "-c", script, ANCHOR_NAME, str(pid), relay, *extra])


def _say(prefix: str, message: str) -> None:
    from st2.drivers.lifecycle import say

    say(prefix, message)
