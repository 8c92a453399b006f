"""The seat's terminal: its own tmux server, reached only through its ``-S`` socket.

Every call is one command list with a real outer timeout (2 s), never under the user's
configuration (``-f /dev/null``): a step of the delivery and the observations that follow it go
as one list (tmux runs a list in order and stops at its first failing command). A timed-out or
failed list reports failure (``None`` / ``False``); callers treat that as "not proven", never as
success, and never send it again another way.

A list goes through the seat's control-mode client when the terminal has a
:class:`st2.ding.control_client.ControlPool` (the DING service's, which bounds how many a host
keeps): the kept one, or one opened for it; otherwise (no pool: a notifier serving its seat
itself; or no client could be had) it is one short tmux client spawned for it. ``probes`` counts
lists sent, ``spawned`` the client processes spawned for them.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from st2.ding import spawner
from st2.ding.control_client import ControlPool
from st2.runtime.tmux import SESSION_NAME, client_argv
from st2.drivers.screen import Screen

COMMAND_TIMEOUT_SECONDS = 2.0
SESSION = SESSION_NAME  # the session name the PTY backend gives every task
_CURSOR_FORMAT = "#{cursor_x} #{cursor_y} #{pane_width} #{pid} #{pane_height}"


class Terminal:
    def __init__(self, socket: Path | str, session: str = SESSION,
                 timeout: float = COMMAND_TIMEOUT_SECONDS, pool: ControlPool | None = None) -> None:
        self.socket = str(socket)
        self.session = session
        self.timeout = timeout
        self.pool = pool
        self.probes = 0
        self.spawned = 0
        self.server_pid: int | None = None

    def _run(self, *arguments: str) -> subprocess.CompletedProcess | None:
        self.probes += 1
        if self.pool is not None:
            taken, result = self.pool.run(self.socket, self.session, arguments, self.timeout)
            if taken:
                return result
        self.spawned += 1
        return spawner.run(client_argv(self.socket, *arguments), self.timeout)

    def alive(self) -> bool:
        """The target session answers on the socket."""
        result = self._run("has-session", "-t", self.session)
        return result is not None and result.returncode == 0

    def capture(self) -> Screen | None:
        """One observation: the visible pane with styling, plus cursor, width and server pid, in
        one client (one probe)."""
        ran, screens = self._then_observe((), 1, 0.0)
        return screens[0] if ran and screens else None

    def _then_observe(self, command: tuple[str, ...], observations: int,
                      gap: float) -> tuple[bool, list[Screen]]:
        """Run ``command`` (none when empty), then take ``observations`` observations, each after
        a ``gap`` the server waits out (``run-shell -d``: its event loop goes on, so the pane's
        output between them is processed), all in ONE client. Return whether every command of
        the list ran (tmux stops a list at its first failing command, and then exits non-zero)
        and the observations parsed; an observation that does not parse ends the list of
        screens (fail closed: what is missing proves nothing)."""
        words: list[str] = []
        for index in range(observations):
            if gap > 0 and (command or index):
                words += ["run-shell", "-d", f"{gap:.3f}", ";"]
            words += ["display-message", "-p", "-t", self.session, _CURSOR_FORMAT, ";",
                      "capture-pane", "-p", "-e", "-t", self.session, ";"]
        argv = ([*command, ";"] if command else []) + words
        result = self._run(*argv[:-1])
        if result is None or result.returncode != 0:
            return False, []
        return True, self._screens(result.stdout)

    def _screens(self, output: str) -> list[Screen]:
        """Each observation is its trailer line (cursor, width, server pid, height), then exactly
        ``height`` lines of the pane; both come from one server pass, so they agree."""
        lines = output.split("\n")
        screens, index = [], 0
        while index < len(lines) - 1:
            fields = lines[index].split()
            if len(fields) != 5 or not all(field.isdigit() for field in fields):
                break
            cursor_x, cursor_y, width, server_pid, height = (int(field) for field in fields)
            body = lines[index + 1:index + 1 + height]
            if len(body) != height or index + 1 + height >= len(lines):
                break
            self.server_pid = server_pid
            screens.append(Screen.parse("\n".join(body) + "\n", cursor_x, cursor_y, width))
            index += 1 + height
        return screens

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

    def delete_buffer(self, name: str) -> bool:
        """Delete the named buffer; whether the server said it did (a buffer left behind is
        harmless: no later head names it)."""
        result = self._run("delete-buffer", "-b", name)
        return result is not None and result.returncode == 0

    def load_and_look(self, name: str, text: str) -> tuple[bool, Screen | None]:
        """Load the named buffer and take one observation in the same client: whether the load
        (and the look) ran, and the screen just after it (None when not proven)."""
        # One argv element that never ends in ";" (a notice ends "check your inbox"), so tmux
        # cannot split it into a second command.
        ran, screens = self._then_observe(("set-buffer", "-b", name, "--", text), 1, 0.0)
        return ran, screens[0] if screens else None

    def paste_and_observe(self, name: str, observations: int, gap: float) -> tuple[bool, list[Screen]]:
        """Paste and delete the named buffer in one server command, bracketed when the program
        asked for bracketed paste (``-p``), then take ``observations`` observations ``gap``
        apart, in one client. ``False`` when the list did not run whole (the paste may or may
        not have run: its buffer's presence says)."""
        return self._then_observe(("paste-buffer", "-d", "-p", "-b", name, "-t", self.session),
                                  observations, gap)

    def return_and_observe(self, observations: int, gap: float) -> tuple[bool, list[Screen]]:
        """Send one Return, then take ``observations`` observations ``gap`` apart, in one
        client."""
        return self._then_observe(("send-keys", "-t", self.session, "Enter"), observations, gap)
