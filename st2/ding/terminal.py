"""The seat's terminal: its own tmux server, reached only through its ``-S`` socket.

Every call is one short tmux client with a real outer timeout (2 s) and never the user's
configuration (``-f /dev/null``). A timed-out or failed command reports failure (``None`` /
``False``); callers treat that as "not proven", never as success. ``probes`` counts client
processes spawned, so churn is measurable.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from st2.runtime.tmux import SESSION_NAME, client_argv
from st2.drivers.screen import Screen

COMMAND_TIMEOUT_SECONDS = 2.0
SESSION = SESSION_NAME  # the session name the PTY backend gives every task
_CURSOR_FORMAT = "#{cursor_x} #{cursor_y} #{pane_width} #{pid}"


class Terminal:
    def __init__(self, socket: Path | str, session: str = SESSION,
                 timeout: float = COMMAND_TIMEOUT_SECONDS) -> None:
        self.socket = str(socket)
        self.session = session
        self.timeout = timeout
        self.probes = 0
        self.server_pid: int | None = None

    def _run(self, *arguments: str) -> subprocess.CompletedProcess | None:
        self.probes += 1
        try:
            return subprocess.run(
                client_argv(self.socket, *arguments),
                capture_output=True, text=True, timeout=self.timeout, stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None

    def alive(self) -> bool:
        """The target session answers on the socket."""
        result = self._run("has-session", "-t", self.session)
        return result is not None and result.returncode == 0

    def capture(self) -> Screen | None:
        """One observation: the visible pane with styling, plus cursor, width and server pid, in
        one client (one probe)."""
        result = self._run("capture-pane", "-p", "-e", "-t", self.session, ";",
                           "display-message", "-p", "-t", self.session, _CURSOR_FORMAT)
        if result is None or result.returncode != 0:
            return None
        body, _, trailer = result.stdout.rstrip("\n").rpartition("\n")
        fields = trailer.split()
        if len(fields) != 4 or not all(field.isdigit() for field in fields):
            return None
        cursor_x, cursor_y, width, server_pid = (int(field) for field in fields)
        self.server_pid = server_pid
        return Screen.parse(body + "\n", cursor_x, cursor_y, width)

    def current_server(self) -> int | None:
        result = self._run("display-message", "-p", "-t", self.session, "#{pid}")
        if result is None or result.returncode != 0 or not result.stdout.strip().isdigit():
            return None
        self.server_pid = int(result.stdout.strip())
        return self.server_pid

    def buffer_exists(self, name: str) -> bool | None:
        """Whether the named buffer exists; None when the server did not answer."""
        result = self._run("list-buffers", "-F", "#{buffer_name}")
        if result is None or result.returncode != 0:
            # tmux exits non-zero with "no buffers" on an empty list in some versions.
            if result is not None and "no buffer" in result.stderr:
                return False
            return None
        return name in result.stdout.split("\n")

    def load_buffer(self, name: str, text: str) -> bool:
        # One argv element that never ends in ";" (a notice ends "check your inbox"), so tmux
        # cannot split it into a second command.
        result = self._run("set-buffer", "-b", name, "--", text)
        return result is not None and result.returncode == 0

    def paste_buffer(self, name: str) -> bool:
        """Paste and delete the named buffer in one server command, bracketed when the program
        asked for bracketed paste (``-p``)."""
        result = self._run("paste-buffer", "-d", "-p", "-b", name, "-t", self.session)
        return result is not None and result.returncode == 0

    def press_return(self) -> bool:
        result = self._run("send-keys", "-t", self.session, "Enter")
        return result is not None and result.returncode == 0
