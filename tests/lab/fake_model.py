"""A fake model server for the lab tier (standard library only).

One HTTP server on a loopback address and a random port speaks the three wire protocols the
harnesses use — Anthropic Messages (``POST /v1/messages``, streaming and not, ``HEAD /``),
OpenAI Responses (``POST /v1/responses``, streaming, with Codex's ``x-codex-*`` rate-limit
headers) and OpenAI Chat Completions (``POST /v1/chat/completions``, streaming with a final
usage chunk; ``GET /v1/models``). It never opens a connection of its own.

Every answer carries the token usage the test set (``set_usage``), placed literally into each
wire's fields, so every number a harness derives from it is known in advance:

    Anthropic  input_tokens=input, cache_read_input_tokens=cache_read,
               cache_creation_input_tokens=cache_creation, output_tokens=output
    Responses  input_tokens=input, input_tokens_details.cached_tokens=cache_read,
               output_tokens=output, output_tokens_details.reasoning_tokens=reasoning,
               total_tokens=input+output
    Chat       prompt_tokens=input, prompt_tokens_details.cached_tokens=cache_read,
               completion_tokens=output, completion_tokens_details.reasoning_tokens=reasoning,
               total_tokens=input+output

Scripted answers: a line ``FAKE_TOOLS: <command> ;; <command>`` makes the reply several shell
calls in one assistant turn (Anthropic wire; others take the first). A line of the last user
message starting ``FAKE_TOOL: <command>`` makes the
reply a call of the shell tool the request offers (``Bash``, ``bash``, ``_bash``,
``exec_command``, ``shell_command``, ``shell``); ``FAKE_ESCALATE: <command>`` does the same but
asks Codex's ``exec_command`` to run outside the sandbox, which makes Codex ask for approval; a line starting ``FAKE_SUBAGENT`` makes it a
call of the sub-agent tool (``Agent``, ``Task``, ``task``, ``_task``). A request whose last
message is a tool result, or that offers no such tool, gets the plain text
``Hello from the fake model.``. The marker must start a line so that a summarization prompt
quoting an earlier turn ("[User]: FAKE_TOOL: …") is answered with text, not a tool call.

Every request is appended to ``requests`` (and to ``log_path`` as JSON lines when given) so a
test can assert what the harness sent.

Held answers: after ``hold(text)``, a model request whose last user message contains ``text`` (not
a tool result) is logged (``held: True``) at once but answered only after ``release(text)`` — a
turn kept in flight for as long as a test needs; ``stop()`` releases every hold.
"""

from __future__ import annotations

import ipaddress
import json
import re
import threading
import time
import uuid
from dataclasses import asdict, dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import fake_wire

Conversation = fake_wire.Conversation
TEXT_ANSWER = fake_wire.TEXT_ANSWER
TOOL_MARKER = "FAKE_TOOL:"
# Like FAKE_TOOL, but Codex's exec_command asks to run outside its sandbox (an approval prompt).
ESCALATE_MARKER = "FAKE_ESCALATE:"
SUBAGENT_MARKER = "FAKE_SUBAGENT"
STATUS_MARKER = "FAKE_HTTP_STATUS:"
"""``FAKE_HTTP_STATUS: 401`` answers that request with the HTTP status (an error body, no stream)."""
# A marker opening the body of a mail line st2's Codex pump delivered (one JSON object per line,
# the body escaped): the command runs to the next escape or quote rather than to the line's end.
_EMBEDDED = re.compile(r'^\{.*"body":"(FAKE_TOOL:|FAKE_ESCALATE:)\s*([^"\\]+)')
# ``FAKE_TOOLS: <command> ;; <command> …``: several shell calls batched in one assistant turn
# (Anthropic wire only; the other wires answer with the first call).
BATCH_MARKER = "FAKE_TOOLS:"
BATCH_SEPARATOR = ";;"
# The sub-agent's own first message; it carries no marker, so the sub-agent answers with text.
SUBAGENT_PROMPT = "Say hello."
SHELL_TOOLS = ("Bash", "bash", "_bash", "exec_command", "shell_command", "shell")
SUBAGENT_TOOLS = ("Agent", "Task", "task", "_task")


class NonLoopbackAddress(ValueError):
    """The fake model only ever listens on a loopback address."""


@dataclass(frozen=True)
class Usage:
    """The token counts every answer reports until the test changes them."""

    input: int = 9900
    output: int = 42
    cache_read: int = 1200
    cache_creation: int = 300
    reasoning: int = 0


@dataclass(frozen=True)
class RateLimits:
    """Codex's rate-limit headers; resets are given as seconds from the answer's time."""

    primary_used_percent: float = 12.5
    primary_window_minutes: int = 300
    primary_resets_in_seconds: int = 3600
    secondary_used_percent: float = 34.0
    secondary_window_minutes: int = 10080
    secondary_resets_in_seconds: int = 86400


def require_loopback(host: str) -> None:
    """Raise NonLoopbackAddress unless ``host`` is ``localhost`` or a loopback IP literal."""
    if host == "localhost":
        return
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        raise NonLoopbackAddress(f"refusing to listen on {host!r}: not a loopback IP literal") from None
    if not address.is_loopback:
        raise NonLoopbackAddress(f"refusing to listen on {host}: not a loopback address")


def choose_answer(conversation: Conversation) -> dict[str, Any]:
    """Return ``{"kind": "text"}`` or ``{"kind": "tool", "name": …, "arguments": {…}}``."""
    if conversation.last_is_tool_result:
        return {"kind": "text"}
    for line in conversation.last_user_text.splitlines():
        line = line.strip()
        if line.startswith(BATCH_MARKER):
            name = next((tool for tool in SHELL_TOOLS if tool in conversation.tool_names), None)
            commands = [part.strip() for part in line[len(BATCH_MARKER):].split(BATCH_SEPARATOR) if part.strip()]
            if name is not None and commands:
                calls = [{"name": name, "arguments": shell_arguments(name, command)} for command in commands]
                return {"kind": "tool", "name": name, "arguments": calls[0]["arguments"], "batch": calls}
        marker = next((m for m in (TOOL_MARKER, ESCALATE_MARKER) if line.startswith(m)), None)
        if marker is not None:
            name = next((tool for tool in SHELL_TOOLS if tool in conversation.tool_names), None)
            if name is not None:
                command = line[len(marker):].strip()
                arguments = shell_arguments(name, command)
                if marker == ESCALATE_MARKER and name == "exec_command":
                    arguments |= {"sandbox_permissions": "require_escalated",
                                  "justification": "st2 lab asks for approval"}
                return {"kind": "tool", "name": name, "arguments": arguments}
        embedded = _EMBEDDED.search(line) if marker is None else None
        if embedded is not None:
            name = next((tool for tool in SHELL_TOOLS if tool in conversation.tool_names), None)
            if name is not None:
                arguments = shell_arguments(name, embedded.group(2).strip())
                if embedded.group(1) == ESCALATE_MARKER and name == "exec_command":
                    arguments |= {"sandbox_permissions": "require_escalated",
                                  "justification": "st2 lab asks for approval"}
                return {"kind": "tool", "name": name, "arguments": arguments}
        if line.startswith(SUBAGENT_MARKER):
            name = next((tool for tool in SUBAGENT_TOOLS if tool in conversation.tool_names), None)
            if name is not None:
                return {"kind": "tool", "name": name, "arguments": subagent_arguments(name)}
    return {"kind": "text"}


def shell_arguments(tool: str, command: str) -> dict[str, Any]:
    """The argument object each harness's shell tool expects."""
    if tool == "exec_command":
        return {"cmd": command}
    if tool == "shell":
        return {"command": ["bash", "-lc", command]}
    if tool == "shell_command":
        return {"command": command}
    return {"command": command, "description": "Run a marker command"}


def subagent_arguments(tool: str) -> dict[str, Any]:
    kind = "general-purpose" if tool in ("Agent", "Task") else "general"
    return {"description": "Say hello", "prompt": SUBAGENT_PROMPT, "subagent_type": kind}


class FakeModel:
    """The server. Use as a context manager, or call ``start()`` and ``stop()``."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, usage: Usage | None = None,
                 rate_limits: RateLimits | None = None, log_path: Path | None = None,
                 models: tuple[str, ...] = ("fake-model",)) -> None:
        require_loopback(host)
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._usage = usage or Usage()
        self.rate_limits = rate_limits or RateLimits()
        self.models = models
        self.log_path = log_path
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._answered = threading.Condition(self._lock)
        self._holds: dict[str, threading.Event] = {}

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> "FakeModel":
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer((self._host, self._port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "FakeModel":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "server not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    # -- test controls ---------------------------------------------------------------------
    @property
    def usage(self) -> Usage:
        with self._lock:
            return self._usage

    def set_usage(self, usage: Usage | None = None, **fields: int) -> Usage:
        """Replace the usage (or some of its fields) reported from the next answer on."""
        with self._lock:
            self._usage = replace(usage or self._usage, **fields)
            return self._usage

    def hold(self, text: str) -> None:
        """Answer no model request whose last user message contains ``text`` until ``release(text)``."""
        with self._lock:
            self._holds.setdefault(text, threading.Event())

    def release(self, text: str | None = None) -> None:
        """Answer the requests ``hold(text)`` kept waiting (every hold when ``text`` is None), and
        hold no more of them."""
        with self._lock:
            names = list(self._holds) if text is None else [text]
            gates = [self._holds.pop(name) for name in names if name in self._holds]
        for gate in gates:
            gate.set()

    def _gate(self, conversation: Conversation) -> threading.Event | None:
        if conversation.last_is_tool_result:
            return None
        last = conversation.last_user_text or ""
        with self._lock:
            return next((gate for text, gate in self._holds.items() if text in last), None)

    def model_requests(self) -> list[dict[str, Any]]:
        """The logged requests that reached a model endpoint (POST), in arrival order."""
        with self._lock:
            return [entry for entry in self.requests if entry["method"] == "POST"]

    def carries(self, text: str) -> bool:
        """Whether some model request's body holds ``text`` verbatim inside one of its strings
        (a system prompt, a developer message, an input part), wherever the wire puts it."""
        def strings(value) -> list[str]:
            if isinstance(value, str):
                return [value]
            if isinstance(value, dict):
                return [found for item in value.values() for found in strings(item)]
            if isinstance(value, list):
                return [found for item in value for found in strings(item)]
            return []

        return any(text in found for entry in self.model_requests() for found in strings(entry["body"]))

    def wait_for(self, predicate, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Block until ``predicate(requests)`` is true; return the log. Raise TimeoutError."""
        deadline = time.monotonic() + timeout
        with self._answered:
            while not predicate(self.requests):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"fake model: condition not met after {timeout}s; "
                                       f"{len(self.requests)} requests logged")
                self._answered.wait(remaining)
            return list(self.requests)

    # -- the handler's side ----------------------------------------------------------------
    def _record(self, entry: dict[str, Any]) -> None:
        with self._answered:
            entry["seq"] = len(self.requests) + 1
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a") as log:
                    log.write(json.dumps(entry) + "\n")
            self._answered.notify_all()


class _Handler(BaseHTTPRequestHandler):
    fake: FakeModel
    protocol_version = "HTTP/1.1"
    server_version = "st2-fake-model/1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the request log is the record
        pass

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _entry(self, raw: bytes) -> dict[str, Any]:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                "body_len": len(raw), "body": body}

    def do_HEAD(self) -> None:
        self.fake._record(self._entry(b""))
        self._send(200, b"", "text/plain")

    def do_GET(self) -> None:
        self.fake._record(self._entry(b""))
        path = self.path.split("?")[0]
        if path in ("/v1/models", "/models"):
            data = {"object": "list", "data": [{"id": model, "object": "model", "created": 0, "owned_by": "fake"}
                                                for model in self.fake.models]}
            self._send(200, json.dumps(data).encode(), "application/json")
        elif path == "/":
            self._send(200, b"ok", "text/plain")
        else:
            self._send(404, b'{"error":{"type":"not_found","message":"fake model: no such path"}}', "application/json")

    def do_POST(self) -> None:
        raw = self._read_body()
        entry = self._entry(raw)
        path = self.path.split("?")[0]
        body = entry["body"] if isinstance(entry["body"], dict) else {}
        usage = self.fake.usage
        if path.endswith("/messages/count_tokens"):
            entry.update(answer=None, usage=None)
            self.fake._record(entry)
            self._send(200, json.dumps({"input_tokens": usage.input}).encode(), "application/json")
            return
        wire = {"/v1/messages": "anthropic", "/v1/responses": "responses",
                "/v1/chat/completions": "chat", "/responses": "responses",
                "/chat/completions": "chat"}.get(path)
        if wire is None:
            entry.update(answer=None, usage=None)
            self.fake._record(entry)
            self._send(404, b'{"error":{"type":"not_found","message":"fake model: no such path"}}', "application/json")
            return
        conversation = fake_wire.read_conversation(wire, body)
        status = re.search(re.escape(STATUS_MARKER) + r"\s*([0-9]{3})", conversation.last_user_text or "")
        if status is not None and not conversation.last_is_tool_result:
            entry.update(wire=wire, summary=asdict(conversation), answer={"kind": "status", "status": int(status.group(1))},
                         usage=None)
            self.fake._record(entry)
            message = {"error": {"type": "fake_status", "code": status.group(1), "message": f"fake model: HTTP {status.group(1)}"}}
            self._send(int(status.group(1)), json.dumps(message).encode(), "application/json")
            return
        answer = choose_answer(conversation)
        answer["call_id"] = uuid.uuid4().hex[:12]
        gate = self.fake._gate(conversation)
        entry.update(wire=wire, summary=asdict(conversation) | {"model": body.get("model"),
                                                               "stream": bool(body.get("stream"))},
                     answer=answer, usage=asdict(usage))
        if gate is not None:
            entry["held"] = True
        self.fake._record(entry)
        if gate is not None:
            gate.wait()
        model = str(body.get("model") or "fake-model")
        streaming = bool(body.get("stream"))
        headers: dict[str, str] = {}
        if wire == "anthropic":
            payload = (fake_wire.anthropic_stream if streaming else fake_wire.anthropic_message)(model, answer, usage)
        elif wire == "responses":
            payload = fake_wire.responses_stream(model, answer, usage)
            headers = fake_wire.codex_rate_limit_headers(self.fake.rate_limits, time.time())
            streaming = True
        else:
            payload = (fake_wire.chat_stream if streaming else fake_wire.chat_completion)(model, answer, usage)
        content_type = "text/event-stream" if streaming else "application/json"
        self._send(200, payload, content_type, headers)


def main(argv: list[str] | None = None) -> int:
    """Run the fake on its own: ``python tests/lab/fake_model.py [--port N] [--log FILE]``."""
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", type=Path)
    arguments = parser.parse_args(argv)
    with FakeModel(arguments.host, arguments.port, log_path=arguments.log) as fake:
        print(fake.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
