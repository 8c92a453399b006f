"""A seat's tmux server spoken to through one kept control-mode client instead of one spawned
client per command list.

:class:`ControlClient` is ``tmux -S <socket> -f /dev/null -C attach-session -t <session> -f
ignore-size,no-output``: attached to the seat's session, it never sizes a window and is sent no
pane output; the server reads its commands from, and writes their output to, one stream socket.

:meth:`ControlClient.run` takes the words of a spawned client's argv (``;`` words separate
commands) and answers as :func:`subprocess.run` would for that argv, or None (not proven):

- the list goes as one line, every word double-quoted with each character outside a small ASCII
  set written as a ``\\u``/``\\U`` escape, so no text (a notice's ``;``, ``$``, ``#``, quotes)
  reaches tmux's parser as syntax; then a sentinel line ``display-message -p <nonce>`` with a
  fresh random nonce, which no pane can know;
- tmux frames each command's output between ``%begin T N F`` and ``%end T N F`` (``%error`` for a
  failure, after which tmux drops the rest of that list); the answer is read up to the
  sentinel's block: returncode 0 when every command of the list ended ``%end``, 1 when the last
  block is an ``%error``, stdout the output lines of the commands that succeeded, stderr the
  error's;
- pane text is not escaped inside a block, so framing is checked strictly: a guard line outside a
  block, a plain line outside a block, more blocks than commands, fewer without an error, the
  client's ``%exit``, end of stream or the timeout all answer None, and a client that answered
  None is closed, never reused (its stream may hold the rest of an answer).

:class:`ControlPool` keeps at most ``limit`` clients of one process, one per seat socket, each
closed once unused for ``idle`` seconds (a reaper thread). A list for a seat with no client opens
one and goes through it, the first look of a delivery included: one spawn (the attach) and a
round trip, never a second client spawned for the list beside the open (two spawns competing for
the machine: docs/memory.md §The DING service). A seat whose client cannot be had (the pool full of
busy clients, no spawn helper, or the attach refused) is answered by the caller's spawned client
instead. A closed client is detached by the server before its stream closes, and the helper that
started it terminates it when the service dies. A retried command list is never sent through the
other path: a None stands.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
from typing import Callable, Sequence

from st2.ding import spawner
from st2.runtime.tmux import client_argv

POOL_LIMIT = 64              # clients kept at once by one process (~1.1 MiB PSS each, tmux 3.3a)
IDLE_SECONDS = 30.0          # a client unused this long is closed
ATTACH_FLAGS = "ignore-size,no-output"
DETACH_SECONDS = 0.5         # how long closing waits for the server's %exit
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.:,()[]@/!?+=*%&<>|^'")


def quoted(word: str) -> str:
    """``word`` as one double-quoted tmux token that parses back to exactly ``word``."""
    pieces = []
    for character in word:
        if character in _PLAIN:
            pieces.append(character)
        elif ord(character) < 0x10000:
            pieces.append(f"\\u{ord(character):04x}")
        else:
            pieces.append(f"\\U{ord(character):08x}")
    return '"' + "".join(pieces) + '"'


def command_line(words: Sequence[str]) -> str:
    """The words of a client argv as one control-mode line (a ``;`` word separates commands)."""
    return " ".join(";" if word == ";" else quoted(word) for word in words)


class Framing(Exception):
    """The client's output does not frame as tmux frames it."""


class ControlClient:
    def __init__(self, stream: socket.socket, pid: int) -> None:
        self.stream = stream
        self.pid = pid
        self.pending = b""
        self.closed = False

    @classmethod
    def open(cls, socket_path: str, session: str, timeout: float,
             attach: Callable[[list[str], socket.socket, float], int | None] = spawner.attach
             ) -> "ControlClient | None":
        """Attach a control client to ``session`` on ``socket_path``, started by ``attach`` (the
        spawn helper's); None when it is not answering within ``timeout`` seconds (no helper, no
        server, no such session, a wedged one)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = attach(client_argv(socket_path, "-C", "attach-session", "-t", session,
                                     "-f", ATTACH_FLAGS), theirs, timeout)
        finally:
            theirs.close()
        if pid is None:
            ours.close()
            return None
        client = cls(ours, pid)
        if client.run([], timeout) is None:   # the sentinel alone: attached and answering
            return None
        return client

    def close(self) -> None:
        """End the client: ask the server to detach it and wait for its ``%exit`` (bounded), then
        close the stream. tmux 3.3a never lets go of a control client whose peer vanished while
        it had output to write, so an answering client is detached, not merely abandoned."""
        if self.closed:
            return
        self.closed = True
        try:
            deadline = time.monotonic() + DETACH_SECONDS
            self.stream.settimeout(DETACH_SECONDS)
            self.stream.sendall(b"detach-client\n")
            while not self.pending.startswith(b"%exit") and b"\n%exit" not in self.pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self.stream.settimeout(remaining)
                chunk = self.stream.recv(1 << 16)
                if not chunk:
                    break
                self.pending += chunk
        except OSError:
            pass
        try:
            self.stream.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.stream.close()
        if not (self.pending.startswith(b"%exit") or b"\n%exit" in self.pending):
            spawner.end(self.pid)    # not detached in time: its helper ends the process

    def usable(self) -> bool:
        """Nothing sent yet and the client still attached: take what it said unasked (the
        server's notifications, and the blocks of the server's own commands — flags 0, such as
        the attach command's, which tmux may write after the first answer) and fail on its
        ``%exit``, its end (the seat's server gone or replaced) or a block of its own it never
        asked for, so a command list is never sent to a client that cannot answer it."""
        if self.closed:
            return False
        try:
            self.stream.settimeout(0.0)
            while True:
                chunk = self.stream.recv(1 << 16)
                if not chunk:
                    raise Framing("the client ended")
                self.pending += chunk
        except BlockingIOError:
            pass
        except (OSError, Framing):
            self.close()
            return False
        *complete, self.pending = self.pending.split(b"\n")
        guard = start = None
        for index, line in enumerate(complete):
            if guard is not None:             # inside a block of the server's own (flags 0)
                if line in (b"%end " + guard, b"%error " + guard):
                    guard = None
            elif line.startswith(b"%begin ") and not line.endswith(b" 1"):
                guard, start = line[len(b"%begin "):], index
            elif not line.startswith(b"%") or line.startswith((b"%exit", b"%begin", b"%end", b"%error")):
                self.close()
                return False
        if guard is not None:   # a block still arriving: the next answer's reading skips it whole
            self.pending = b"".join(line + b"\n" for line in complete[start:]) + self.pending
        return True

    def run(self, words: Sequence[str], timeout: float) -> subprocess.CompletedProcess | None:
        """The command list ``words`` run once; as :func:`subprocess.run` would answer (text),
        or None, after which this client is closed."""
        if self.closed:
            return None
        nonce = os.urandom(16).hex()
        deadline = time.monotonic() + timeout
        expected = (sum(1 for word in words if word == ";") + 1) if words else 0
        lines = (command_line(words) + "\n" if words else "") + f"display-message -p {nonce}\n"
        try:
            self.stream.settimeout(timeout)
            self.stream.sendall(lines.encode())
            blocks = self._blocks_until(nonce, deadline)
            return self._answer(list(words), blocks, expected)
        except (OSError, Framing):
            self.close()
            return None

    def _answer(self, words: list[str], blocks: list[tuple[bool, list[str]]],
                expected: int) -> subprocess.CompletedProcess:
        failed = bool(blocks) and not blocks[-1][0]
        if len(blocks) > expected or (not failed and len(blocks) != expected) \
                or any(not ok for ok, _ in blocks[:-1]):
            raise Framing(f"{len(blocks)} answers to {expected} commands")
        stdout = "".join(line + "\n" for ok, body in blocks if ok for line in body)
        stderr = "".join(line + "\n" for ok, body in blocks if not ok for line in body)
        return subprocess.CompletedProcess(client_argv("", *words), 1 if failed else 0, stdout, stderr)

    def _blocks_until(self, nonce: str, deadline: float) -> list[tuple[bool, list[str]]]:
        """Every block of this client's commands up to the sentinel's, which ends the answer."""
        blocks: list[tuple[bool, list[str]]] = []
        guard: str | None = None
        body: list[str] = []
        while True:
            line = self._line(deadline)
            if guard is None:
                if line.startswith("%begin "):
                    guard, body = line[len("%begin "):], []
                elif line.startswith(("%end", "%error", "%exit")) or not line.startswith("%"):
                    raise Framing(f"unexpected line outside a block: {line[:40]!r}")
                continue   # a notification (%session-changed, %window-add, …)
            if line in (f"%end {guard}", f"%error {guard}"):
                ours = guard.endswith(" 1")    # flags 1: a command this client sent
                ok = line.startswith("%end")
                guard = None
                if not ours:
                    continue
                if ok and body == [nonce]:
                    return blocks
                blocks.append((ok, body))
                continue
            body.append(line)

    def _line(self, deadline: float) -> str:
        while b"\n" not in self.pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Framing("no answer within the timeout")
            self.stream.settimeout(remaining)
            chunk = self.stream.recv(1 << 16)
            if not chunk:
                raise Framing("the client ended")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line.decode(errors="replace")


class ControlPool:
    """The control clients of one process, one per seat socket, at most ``limit`` at once."""

    def __init__(self, limit: int = POOL_LIMIT, idle: float = IDLE_SECONDS,
                 opener: Callable[[str, str, float], ControlClient | None] = ControlClient.open,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.idle = idle
        self.opener = opener
        self.clock = clock
        self.lock = threading.Lock()
        self.clients: dict[str, ControlClient] = {}
        self.last_used: dict[str, float] = {}
        self.busy: set[str] = set()
        self.opened = 0                 # clients attached so far (each one spawned process)
        self._reaper: threading.Thread | None = None

    def run(self, socket_path: str, session: str, words: Sequence[str],
            timeout: float) -> tuple[bool, subprocess.CompletedProcess | None]:
        """``(True, answer or None)`` when a control client of ``socket_path`` took the list;
        ``(False, None)`` when none could be had (the caller spawns a client instead)."""
        client = self._acquire(socket_path, session, timeout)
        if client is None:
            return False, None
        try:
            return True, client.run(words, timeout)
        finally:
            self._release(socket_path, client)

    def close_idle(self) -> int:
        """Close every client unused for ``idle`` seconds; how many were closed."""
        now = self.clock()
        with self.lock:
            stale = [path for path, used in self.last_used.items()
                     if path not in self.busy and now - used >= self.idle]
            closing = [self._forget(path) for path in stale]
        for client in closing:
            client.close()
        return len(closing)

    def close_all(self) -> None:
        with self.lock:
            closing = [self._forget(path) for path in list(self.clients) if path not in self.busy]
        for client in closing:
            client.close()

    def _make_room(self) -> tuple[bool, ControlClient | None]:
        """Under the lock: whether one more client may be opened, and the least recently used
        idle client forgotten to make room for it (the caller closes it outside the lock)."""
        if len(self.clients) < self.limit:
            return True, None
        idle = [path for path in self.clients if path not in self.busy]
        if not idle:
            return False, None
        return True, self._forget(min(idle, key=self.last_used.__getitem__))

    def _acquire(self, socket_path: str, session: str, timeout: float) -> ControlClient | None:
        evicted = None
        with self.lock:
            if socket_path in self.busy:
                return None
            client = self.clients.get(socket_path)
            if client is not None and not client.usable():
                self._forget(socket_path)
                client = None
            if client is None:
                room, evicted = self._make_room()
                if not room:
                    return None
            self.busy.add(socket_path)
        if evicted is not None:
            evicted.close()
        if client is None:
            client = self.opener(socket_path, session, timeout)
            with self.lock:
                if client is None:
                    self.busy.discard(socket_path)
                    return None
                self.opened += 1
                self.clients[socket_path] = client
            self._start_reaper()
        return client

    def _release(self, socket_path: str, client: ControlClient) -> None:
        with self.lock:
            self.busy.discard(socket_path)
            if client.closed:
                if self.clients.get(socket_path) is client:
                    self._forget(socket_path)
            else:
                self.last_used[socket_path] = self.clock()

    def _forget(self, socket_path: str) -> ControlClient:
        self.last_used.pop(socket_path, None)
        return self.clients.pop(socket_path)

    def _start_reaper(self) -> None:
        with self.lock:
            if self._reaper is not None:
                return
            self._reaper = threading.Thread(target=self._reap, name="st2-ding-control-reaper", daemon=True)
        self._reaper.start()

    def _reap(self) -> None:
        while True:
            time.sleep(max(self.idle / 4, 0.05))
            self.close_idle()
