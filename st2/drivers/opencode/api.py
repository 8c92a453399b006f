"""Talking to ``opencode serve`` on loopback: the version probe behind the ``versionGate``, a small
HTTP client (basic auth with the launch's password, bounded reads, a timeout on every call), the
``apiGate`` check of the OpenAPI document (``GET /doc``), and the incremental SSE parser of
``GET /event``. Standard library only."""

from __future__ import annotations

import base64
import http.client
import json
import re
from typing import Any, Iterator

VERSION_PROBE_SECONDS = 20.0
_VERSION = re.compile(r"^\s*([0-9]+\.[0-9]+\.[0-9]+[0-9A-Za-z.+-]*)\s*$", re.M)
USERNAME = "opencode"
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_EVENT_BYTES = 8 * 1024 * 1024

REQUIRED_PATHS: dict[str, tuple[str, ...]] = {
    "/event": ("get",),
    "/session": ("post",),
    "/session/status": ("get",),
    "/session/{sessionID}": ("get",),
    "/session/{sessionID}/message": ("get",),
    "/session/{sessionID}/prompt_async": ("post",),
    "/permission": ("get",),
    "/permission/{requestID}/reply": ("post",),
    "/question": ("get",),
    "/question/{requestID}/reply": ("post",),
    "/config/providers": ("get",),
}
"""Every route the wrapper calls, and the method it calls it with (measured on 1.18.33)."""


def probe_version(executable: str, environment: dict) -> tuple[str | None, str | None]:
    """``(version, problem)`` from ``<opencode> --version`` (1.18.33 prints the bare version),
    asked once per build (:mod:`st2.drivers.version_probe`)."""
    from st2.drivers.version_probe import probe

    def parse(text: str) -> str | None:
        match = _VERSION.search(text)
        return match.group(1) if match else None

    return probe(executable, environment, parse, "version", timeout=VERSION_PROBE_SECONDS)


class ApiError(OSError):
    """A call that got no usable answer: unreachable, timed out, a non-2xx status, or not JSON."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Client:
    """One server's base address and credentials. Every call opens its own connection (the SSE
    stream holds one of its own), so a call never waits behind the stream."""

    def __init__(self, host: str, port: int, password: str | None = None, timeout: float = 10.0) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.headers = {"Accept": "application/json"}
        if password:
            token = base64.b64encode(f"{USERNAME}:{password}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"

    def connection(self, timeout: float | None = None) -> http.client.HTTPConnection:
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.timeout)

    def call(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> Any:
        """The decoded JSON answer (None for an empty one); raise :class:`ApiError`."""
        connection = self.connection(timeout)
        data = None if body is None else json.dumps(body, ensure_ascii=True).encode()
        headers = dict(self.headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read(MAX_BODY_BYTES + 1)
        except (OSError, http.client.HTTPException) as error:
            raise ApiError(f"{method} {path}: {error}") from None
        finally:
            connection.close()
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(f"{method} {path}: answer larger than {MAX_BODY_BYTES} bytes")
        if not 200 <= response.status < 300:
            raise ApiError(f"{method} {path}: HTTP {response.status}", response.status)
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise ApiError(f"{method} {path}: the answer is not JSON") from None

    def get(self, path: str, timeout: float | None = None) -> Any:
        return self.call("GET", path, None, timeout)

    def post(self, path: str, body: Any, timeout: float | None = None) -> Any:
        return self.call("POST", path, body, timeout)


def api_problem(document: Any) -> str | None:
    """Why the OpenAPI document does not offer what the wrapper calls, or None."""
    paths = document.get("paths") if isinstance(document, dict) else None
    if not isinstance(paths, dict):
        return "the OpenAPI document has no paths"
    missing = [f"{method.upper()} {path}" for path, methods in REQUIRED_PATHS.items() for method in methods
               if not isinstance(paths.get(path), dict) or method not in paths[path]]
    return f"the OpenAPI document lacks {', '.join(missing)}" if missing else None


class SseParser:
    """Incremental ``text/event-stream`` parsing: feed bytes, take each event's JSON ``data``.
    A ``data`` that is not a JSON object is yielded as :class:`Malformed`; an event longer than
    :data:`MAX_EVENT_BYTES` is dropped whole (and reported as Malformed)."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[bytes] = []
        self._size = 0
        self._overflow = False

    def feed(self, chunk: bytes) -> Iterator[Any]:
        self._buffer += chunk
        while True:
            newline = self._buffer.find(b"\n")
            if newline < 0:
                if len(self._buffer) > MAX_EVENT_BYTES:
                    self._buffer = b""
                    self._overflow = True
                return
            line, self._buffer = self._buffer[:newline].rstrip(b"\r"), self._buffer[newline + 1:]
            if not line:
                event = self._dispatch()
                if event is not None:
                    yield event
                continue
            if line.startswith(b":"):
                continue
            field, _, value = line.partition(b":")
            if field == b"data":
                value = value[1:] if value.startswith(b" ") else value
                self._size += len(value)
                if self._size > MAX_EVENT_BYTES:
                    self._overflow = True
                else:
                    self._data.append(value)

    def _dispatch(self):
        data, overflow = b"\n".join(self._data), self._overflow
        self._data, self._size, self._overflow = [], 0, False
        if overflow:
            return Malformed("an event larger than the bound was dropped")
        if not data:
            return None
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            return Malformed(data[:80].decode("utf-8", "replace"))
        return event if isinstance(event, dict) else Malformed(data[:80].decode("utf-8", "replace"))


class Malformed:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def events_of(text: str) -> Iterator[Any]:
    """The events of a whole captured SSE text (``captures/opencode/…/event.sse``)."""
    parser = SseParser()
    yield from parser.feed(text.encode("utf-8") + b"\n\n")
