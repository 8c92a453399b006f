"""The answer channel of a native wrapper (Codex, opencode): how a process other than the one at
the PTY — `st2 web` — reads what the seat is blocked on and answers it through the same human
desk (:class:`st2.drivers.human_desk.HumanDesk`) the keyboard uses.

The wrapper listens on an owner-only Unix socket, ``<runtime scope>/a/<runtime-id>``
(:func:`st2.runtime.layout.answer_socket`; the directory 0700, the socket 0600), served from its
own loop: one request per connection, one JSON line each way, at most :data:`REQUEST_LIMIT`
bytes, :data:`CLIENT_SECONDS` to arrive.

- ``{"op": "asks"}`` → ``{"incarnation": I, "asks": [{"digest", "kind", "text"}, …]}``, oldest
  first;
- ``{"op": "answer", "incarnation": I, "digest": D, "verb": "approve"|"decline"|"answer",
  "text": T}`` → ``{"ok": true|false, "outcome": "…"}``.

An ask's identity is the seat (the socket), the wrapper's incarnation (its harness-state
token) and the digest of the ask itself (:func:`st2.drivers.human_desk.ask_digest`): an answer
naming another incarnation, or a digest no pending ask has (answered meanwhile, or replaced by a
different ask), is refused and changes nothing — it is never applied to the next ask.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from st2.runtime import layout

REQUEST_LIMIT = 64 * 1024
CLIENT_SECONDS = 0.5
VERBS = ("approve", "decline", "answer")


class AnswerChannel:
    """The listening side, owned by one wrapper: ``desk`` answers, ``incarnation()`` names the
    wrapper's current incarnation."""

    def __init__(self, scope_directory: Path, runtime_id: str, desk, incarnation) -> None:
        self.path = layout.answer_socket(Path(scope_directory), runtime_id)
        self.desk = desk
        self.incarnation = incarnation
        self.listener: socket.socket | None = None

    def open(self) -> str | None:
        """Listen; the reason when the channel cannot be opened (the wrapper runs on without it)."""
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                os.unlink(self.path)       # a dead predecessor's; this wrapper owns the seat now
            except FileNotFoundError:
                pass
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o177)
            try:
                listener.bind(str(self.path))
            finally:
                os.umask(old)
            listener.listen(8)
            listener.setblocking(False)
        except OSError as error:
            return f"answer channel unavailable ({error.strerror or error})"
        self.listener = listener
        return None

    def fileno(self) -> int:
        return self.listener.fileno()

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()
            self.listener = None
            try:
                os.unlink(self.path)
            except OSError:
                pass

    def serve_one(self) -> None:
        """Take one waiting connection and answer it (never raises for a client's fault)."""
        try:
            connection, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        with connection:
            try:
                connection.settimeout(CLIENT_SECONDS)
                request = _read_line(connection)
                reply = self.handle(request)
                connection.sendall(json.dumps(reply).encode() + b"\n")
            except (OSError, ValueError):
                pass

    def handle(self, request) -> dict:
        if not isinstance(request, dict):
            return {"ok": False, "outcome": "refused: not a request"}
        incarnation = self.incarnation()
        if request.get("op") == "asks":
            return {"incarnation": incarnation, "asks": self.desk.asks()}
        if request.get("op") != "answer":
            return {"ok": False, "outcome": "refused: unknown op"}
        verb, digest, text = request.get("verb"), request.get("digest"), request.get("text") or ""
        if verb not in VERBS or not isinstance(digest, str) or not isinstance(text, str):
            return {"ok": False, "outcome": "refused: malformed answer"}
        if request.get("incarnation") != incarnation:
            return {"ok": False, "outcome": "refused: the seat's harness was restarted since that ask was shown"}
        return self.desk.answer(digest, verb, text)


def _read_line(connection: socket.socket) -> object:
    data = b""
    while b"\n" not in data:
        chunk = connection.recv(4096)
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_LIMIT:
            raise ValueError("request too large")
    return json.loads(data.split(b"\n", 1)[0] or b"null")


def request(scope_directory: Path, runtime_id: str, message: dict, timeout: float = 3.0) -> dict | None:
    """Ask the seat's wrapper; None when no wrapper answers (none runs, or it is not native)."""
    path = layout.answer_socket(Path(scope_directory), runtime_id)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(str(path))
            client.sendall(json.dumps(message).encode() + b"\n")
            reply = _read_line(client)
    except (OSError, ValueError):
        return None
    return reply if isinstance(reply, dict) else None
