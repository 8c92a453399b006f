"""A stand-in agent TUI for DING's process tests (run inside a real tmux pane).

It draws what a line-oriented agent terminal draws, in the grammar of
:mod:`st2.ding.harness.shell`: submitted prompts as transcript rows, ``queued: <text>`` rows
while busy, and the composer on the cursor's row — the typed input left of the cursor, or, when
empty, a dim placeholder suggestion right of it (which is not a human draft).

- It asks for bracketed paste (``ESC[?2004h``); a paste frame's contents go into the input.
- Return submits the input: while idle it becomes a transcript row; while busy it is queued,
  and the queue is submitted in order when the program turns idle again.
- ``--control FILE`` holding ``busy`` or ``idle`` switches the mode (checked every 20 ms);
  ``frozen`` stops reading the terminal (a hung program: input waits unread in the PTY and the
  screen stays as it was) until ``busy`` or ``idle`` thaws it.
- ``--bytes FILE`` receives every byte read from the terminal, unmodified; ``--events FILE``
  gets one line per ``paste``/``submit``/``queue``/``mode`` event (tab-separated, the text
  with ``repr`` escaping), so a test can count exactly what arrived.
- ``--render-delay SECONDS`` shows a pasted text only that long after the paste ends, and drops a
  Return that arrives before it shows (a ``swallowed`` event; the text stays): a TUI that takes
  keystrokes before it has drawn them, as omp 18.2.3 swallowed a Return sent the moment a
  notice showed.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import termios
import time
import tty

PASTE_START = b"\x1b[200~"
PASTE_END = b"\x1b[201~"


class Program:
    def __init__(self, arguments) -> None:
        self.bytes_log = open(arguments.bytes, "ab", buffering=0)
        self.events = open(arguments.events, "a", buffering=1)
        self.control = arguments.control
        self.placeholder = arguments.placeholder
        self.input = ""
        self.transcript: list[str] = []
        self.queue: list[str] = []
        self.busy = False
        self.frozen = False
        self.pending = b""
        self.pasting: bytes | None = None
        self.render_delay = arguments.render_delay
        self.unshown: tuple[float, str] | None = None   # (shown at, text) of a paste not yet drawn

    def event(self, kind: str, text: str = "") -> None:
        self.events.write(f"{kind}\t{text!r}\n")

    def submit(self) -> None:
        text, self.input = self.input, ""
        if not text:
            return
        if self.busy:
            self.queue.append(text)
            self.event("queue", text)
        else:
            self.transcript.append(text)
            self.event("submit", text)

    def set_busy(self, busy: bool) -> None:
        if busy == self.busy:
            return
        self.busy = busy
        self.event("mode", "busy" if busy else "idle")
        if not busy:
            for text in self.queue:
                self.transcript.append(text)
                self.event("submit", text)
            self.queue = []

    def feed(self, data: bytes) -> None:
        self.bytes_log.write(data)
        self.pending += data
        while self.pending:
            if self.pasting is not None:
                end = self.pending.find(PASTE_END)
                if end < 0:
                    self.pasting += self.pending
                    self.pending = b""
                    return
                self.pasting += self.pending[:end]
                self.pending = self.pending[end + len(PASTE_END):]
                text = self.pasting.decode("utf-8", "replace")
                self.pasting = None
                if self.render_delay:
                    self.unshown = (time.monotonic() + self.render_delay, text)
                else:
                    self.input += text
                self.event("paste", text)
                continue
            if self.pending.startswith(PASTE_START):
                self.pasting = b""
                self.pending = self.pending[len(PASTE_START):]
                continue
            if self.pending[:1] == b"\x1b":
                if len(self.pending) < len(PASTE_START) and PASTE_START.startswith(self.pending):
                    return  # wait for the rest of a possible paste start
                self.pending = self.pending[1:]  # any other escape: ignore the ESC
                continue
            head = self.pending[:1]
            if head in (b"\r", b"\n"):
                self.pending = self.pending[1:]
                if self.unshown is not None:
                    self.event("swallowed", self.unshown[1])
                    continue
                self.submit()
                continue
            if head in (b"\x7f", b"\x08"):
                self.pending = self.pending[1:]
                self.input = self.input[:-1]
                continue
            if head[0] < 0x20:
                self.pending = self.pending[1:]
                continue
            # One UTF-8 character (possibly incomplete: wait for more).
            length = 1 if head[0] < 0x80 else 2 if head[0] < 0xE0 else 3 if head[0] < 0xF0 else 4
            if len(self.pending) < length:
                return
            self.input += self.pending[:length].decode("utf-8", "replace")
            self.pending = self.pending[length:]

    def draw(self) -> None:
        rows, _ = _size()
        status = ["[busy]"] if self.busy else []
        queued = [f"queued: {text}" for text in self.queue]
        room = max(0, rows - 1 - len(status) - len(queued))
        visible = self.transcript[-room:] if room else []
        out = ["\x1b[H\x1b[2J"]
        for line in visible + status + queued:
            out.append(line + "\r\n")
        if self.input:
            out.append(self.input)
        elif self.placeholder:
            out.append(f"\x1b[2m{self.placeholder}\x1b[0m\r")
        sys.stdout.write("".join(out))
        sys.stdout.flush()

    def show_paste(self) -> None:
        """Draw a delayed paste once its time has come."""
        if self.unshown is not None and time.monotonic() >= self.unshown[0]:
            self.input += self.unshown[1]
            self.unshown = None

    def poll_control(self) -> None:
        if not self.control:
            return
        try:
            with open(self.control) as handle:
                mode = handle.read().strip()
        except FileNotFoundError:
            return
        if mode == "frozen" and not self.frozen:
            self.frozen = True
            self.event("mode", "frozen")
        elif mode in ("busy", "idle"):
            if self.frozen:
                self.frozen = False
                self.event("mode", "thawed")
            self.set_busy(mode == "busy")


def _size() -> tuple[int, int]:
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
        return size.lines, size.columns
    except OSError:
        return 50, 320


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--control")
    parser.add_argument("--placeholder", default='Try "summarize the open issues"')
    parser.add_argument("--render-delay", type=float, default=0.0)
    arguments = parser.parse_args()
    program = Program(arguments)
    descriptor = sys.stdin.fileno()
    saved = termios.tcgetattr(descriptor)
    tty.setraw(descriptor)
    sys.stdout.write("\x1b[?2004h")
    program.event("ready")
    try:
        program.draw()
        while True:
            readable, _, _ = select.select([] if program.frozen else [descriptor], [], [], 0.02)
            before = (program.input, len(program.transcript), len(program.queue), program.busy)
            if readable:
                data = os.read(descriptor, 65536)
                if not data:
                    return 0
                program.feed(data)
            program.poll_control()
            program.show_paste()
            if (program.input, len(program.transcript), len(program.queue), program.busy) != before:
                program.draw()
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    sys.exit(main())
