"""The wrapper every driver whose harness is a server in its own process group runs (Codex
app-server, opencode serve): :class:`NativeServerSession`.
"""

from __future__ import annotations

import signal

from st2.drivers.lifecycle import exit_words, install_stop_handlers, returncode_status, stop_with_cover, transition


def die_with_parent() -> None:
    """In a native server child (``preexec_fn``): SIGKILL when the wrapper dies, so no orphan
    keeps the harness's session (or answers a predecessor's request after its wrapper is gone)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


class GroupServerSession:
    """The lifecycle half every native wrapper whose harness is a server in its own process group
    shares (Codex app-server, opencode serve): signal handlers that only enqueue, the named
    lifecycle edges, and the stop path over the server's group. Subclasses provide ``child``,
    ``records``, ``clock``, ``stop_grace``, ``requests``, ``lifecycle``, :meth:`note` and
    :attr:`server_name`."""

    server_name = "server"

    def _enqueue(self, number: int, frame) -> None:  # signal handlers only record
        self.requests.append(number)

    def install_signal_handlers(self) -> None:
        install_stop_handlers(self._enqueue)

    def _step(self, event: str) -> None:
        self.lifecycle = transition(self.lifecycle, event)

    def register_inputs(self, selector, watch) -> None:
        """Register the seat's inbox watch (``"watch"``) and the keyboard (``"keyboard"``, when
        ``stdin_fd`` is open) with the loop's selector."""
        import selectors

        if watch.active:
            selector.register(watch.fileno(), selectors.EVENT_READ, "watch")
        if self.stdin_fd is not None:
            try:
                selector.register(self.stdin_fd, selectors.EVENT_READ, "keyboard")
            except (ValueError, OSError):
                self.stdin_fd = None

    def read_keyboard(self, selector, on_keyboard) -> None:
        """Hand what was typed to ``on_keyboard``; at end of input stop reading the keyboard."""
        import os

        data = os.read(self.stdin_fd, 4096)
        if data:
            on_keyboard(data)
        else:
            selector.unregister(self.stdin_fd)
            self.stdin_fd = None

    def _terminate_group(self) -> None:
        import os

        try:
            os.killpg(self.child.pid, signal.SIGTERM)
        except OSError:
            pass

    def _end(self, returncode: int) -> int:
        self._step("reaped")
        self.records.ended(returncode)
        self.note(f"{self.server_name} ended ({exit_words(returncode)})")
        return returncode_status(returncode)

    def _stop(self) -> int:
        import os

        self._step("stop-requested")

        def kill() -> None:
            os.killpg(self.child.pid, signal.SIGKILL)

        returncode, escalated = stop_with_cover(self.child, self.records, self.clock, self.stop_grace,
                                                self._terminate_group, kill)
        self._step("grace-expired" if escalated else "reaped")
        return returncode_status(returncode)
