"""JSON-RPC 2.0 over the app-server's stdio: one JSON object per line each way.

The reader is bounded: a line longer than :data:`MAX_FRAME_BYTES` is a protocol failure
(:class:`FrameTooLarge`) rather than an unbounded buffer, and a line that is not a JSON object is
returned as a :class:`Malformed` frame for the caller to report, never raised. Writes go straight
to the app-server's stdin descriptor. Standard library only.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

MAX_FRAME_BYTES = 32 * 1024 * 1024
"""The largest frame the wrapper accepts. The biggest frame is the ``thread/read`` with turns the
restarted wrapper asks for to settle an ambiguous delivery, which grows with the thread."""


class FrameTooLarge(ValueError):
    """The app-server sent a line beyond :data:`MAX_FRAME_BYTES`; the connection is unusable."""


@dataclass(frozen=True)
class Malformed:
    text: str


class LineReader:
    """Accumulate bytes and split complete lines into frames."""

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        self._buffer += data
        frames: list[Any] = []
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                if len(self._buffer) > self.limit:
                    raise FrameTooLarge(f"a frame exceeds {self.limit} bytes")
                return frames
            if end > self.limit:
                raise FrameTooLarge(f"a frame exceeds {self.limit} bytes")
            line = bytes(self._buffer[:end]).strip()
            del self._buffer[:end + 1]
            if not line:
                continue
            try:
                frame = json.loads(line)
            except ValueError:
                frames.append(Malformed(line[:200].decode("utf-8", "replace")))
                continue
            frames.append(frame if isinstance(frame, dict) else Malformed(line[:200].decode("utf-8", "replace")))


class Connection:
    """The client side: numbered requests, notifications and answers to server requests."""

    def __init__(self, write_fd: int, read_fd: int, log=None) -> None:
        self.write_fd = write_fd
        self.read_fd = read_fd
        self.reader = LineReader()
        self.next_id = 0
        self.log = log  # called with ("out", frame) for every frame written (captures, tests)

    def _write(self, frame: dict) -> None:
        if self.log is not None:
            self.log("out", frame)
        data = (json.dumps(frame, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
        view = memoryview(data)
        while view:
            written = os.write(self.write_fd, view)
            view = view[written:]

    def request(self, method: str, params: dict) -> int:
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def notify(self, method: str, params: dict | None = None) -> None:
        frame: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            frame["params"] = params
        self._write(frame)

    def respond(self, request_id, result: dict) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "result": result})

    def respond_error(self, request_id, code: int, message: str) -> None:
        self._write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def read_available(self) -> list[Any] | None:
        """Frames from one read of the app-server's stdout; None at end of file."""
        data = os.read(self.read_fd, 1 << 16)
        if not data:
            return None
        return self.reader.feed(data)


class FrameLog:
    """Append-only JSONL of the wire, one line per frame."""

    def __init__(self, path: Path) -> None:
        self.handle = open(path, "a", encoding="utf-8")

    def __call__(self, direction: str, frame) -> None:
        if isinstance(frame, Malformed):
            frame = {"unparsed": frame.text}
        self.handle.write(json.dumps({"dir": direction, "msg": frame}, ensure_ascii=False) + "\n")
        self.handle.flush()
