"""opencode's own TUI in the seat's pane (:class:`AttachedTui`): ``opencode attach`` on the served
session runs in the pane while the stream, producers and pump go on in the wrapper; the transcript
view is held until it exits, then takes the pane back with the keyboard. A wrapper the seat host
forked has its pane anchor run the TUI (:mod:`.attach_anchor`); one that is the pane process runs
it itself. A server restart ends the TUI and attaches a new one to the new server.

A mixin of :class:`st2.drivers.opencode.session.OpencodeSession` (before the native wrapper in
its bases: it extends the stop path and the loop's start).
"""

from __future__ import annotations

import os
import subprocess

from st2.drivers.lifecycle import exit_words
from st2.drivers.opencode import attach_anchor


class AttachedTui:
    def attach(self) -> None:
        """Run ``opencode attach`` on the served session as the pane's foreground child (same
        process group as the pane process, so a signal to the PTY's group reaches it), while the
        stream, producers and pump go on here; the transcript is held until it exits. A wrapper
        the seat host forked asks its pane anchor to run it (:mod:`.attach_anchor`); one that is
        the pane process runs it itself."""
        if self.view_mode != "attach" or self.attached is not None or not self.bound \
                or self.client is None or self.stdin_fd is None or not os.isatty(self.stdin_fd):
            return
        argv = [self.argv[0], "attach", f"http://127.0.0.1:{self.client.port}", "--session", self.session_id]
        try:
            if attach_anchor.anchor_channel() is not None:   # forked by the seat host: the pane anchor runs it
                self.attached = attach_anchor.start(self.client.port, self.session_id, self.password)
            else:
                self.attached = subprocess.Popen(argv, stdin=self.stdin_fd,
                                                 env={**self.environment, "OPENCODE_SERVER_PASSWORD": self.password})
        except OSError as error:
            self.note(f"cannot attach opencode's TUI ({error.strerror or error}); the transcript view follows")
            self.view_mode = "transcript"
            return
        self.view.held = True

    def detached(self) -> bool:
        """True once the attached TUI has exited (the transcript view takes the pane back)."""
        if self.attached is None or self.attached.poll() is None:
            return False
        returncode, self.attached = self.attached.returncode, None
        self.view_mode = "transcript"
        self.view.held = False
        self.note(f"opencode's TUI exited ({exit_words(returncode)}); the transcript view follows — /help")
        return True

    def _stop(self) -> int:
        if self.attached is not None and self.attached.poll() is None:
            self.attached.terminate()
        return super()._stop()

    def loop_started(self, selector) -> None:
        self.attach()
        if self.attached is not None and self.stdin_fd is not None:
            selector.unregister(self.stdin_fd)   # the keyboard is the attached TUI's

    def _end_attached(self) -> bool:
        """Stop an attached TUI that is still running (bounded; killed past the bound). True when
        one was running, so the caller attaches a new one."""
        if self.attached is None or self.attached.poll() is not None:
            return False
        self.attached.terminate()
        try:
            self.attached.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.attached.kill()
            self.attached.wait()
        self.attached = None
        return True
