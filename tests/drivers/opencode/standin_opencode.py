"""A stand-in for ``opencode serve`` 1.18.33, built from the captured frames
(captures/opencode/1.18.33/lab/): ``--version`` prints the pinned version; ``serve --hostname H
--port 0`` listens on loopback, prints the "listening" line, checks basic auth against
``$OPENCODE_SERVER_PASSWORD`` and answers the routes the wrapper calls with the captured shapes.

``POST /session/{id}/prompt_async`` answers 204 at once and then, after a random delay of up to
``$STANDIN_PERSIST_DELAY`` seconds, persists the user message (fsync'd, under ``$STANDIN_DIR``, so
it survives a restart like opencode's own storage) and logs its text to ``model-requests.jsonl``
(the fake model's request log: a message the model saw), then streams the captured turn frames
(busy, the finished assistant message with tokens.total 9942, idle). A server killed before the
persist loses the prompt, as the real one does. Each launch appends its pid to ``launches``.
``attach URL --session ID`` stands in for opencode's TUI (:func:`attach`).
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

VERSION = "1.18.33"
CAPTURE = Path(__file__).resolve().parents[3] / "captures" / "opencode" / "1.18.33" / "lab"
ROUTES = ["/event", "/session", "/session/status", "/session/{sessionID}", "/session/{sessionID}/message",
          "/session/{sessionID}/prompt_async", "/permission", "/permission/{requestID}/reply", "/question",
          "/question/{requestID}/reply", "/config/providers", "/session/{sessionID}/summarize"]
METHODS = {"/session": "post", "/session/{sessionID}/prompt_async": "post", "/permission/{requestID}/reply": "post",
           "/question/{requestID}/reply": "post", "/session/{sessionID}/summarize": "post"}

STATE = Path(os.environ.get("STANDIN_DIR", "/tmp/standin-opencode"))
LOCK = threading.Lock()
SUBSCRIBERS: list = []
COUNTER = [0]
QUESTIONS: dict[str, tuple[dict, threading.Event]] = {}   # pending question id -> (request, answered)


def _append(path: Path, row: dict) -> None:
    with open(path, "a") as handle:
        handle.write(json.dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _rows(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def _id(prefix: str) -> str:
    COUNTER[0] += 1
    return f"{prefix}_{time.time_ns():x}{COUNTER[0]:04d}{os.getpid()}"


def emit(event_type: str, properties: dict) -> None:
    frame = json.dumps({"id": _id("evt"), "type": event_type, "properties": properties})
    with LOCK:
        for queue in list(SUBSCRIBERS):
            queue.append(frame)


def turn(session: str, text: str) -> None:
    delay = float(os.environ.get("STANDIN_PERSIST_DELAY", "0.3"))
    time.sleep(random.uniform(0, delay))
    user = {"id": _id("msg"), "sessionID": session, "role": "user", "time": {"created": int(time.time() * 1000)},
            "agent": "build", "model": {"providerID": "fake", "modelID": "fake-model"}}
    _append(STATE / "messages.jsonl", {"info": user, "parts": [{"id": _id("prt"), "type": "text", "text": text,
                                                                "messageID": user["id"], "sessionID": session}]})
    _append(STATE / "model-requests.jsonl", {"session": session, "last_user_text": text})
    emit("session.status", {"sessionID": session, "status": {"type": "busy"}})
    emit("message.updated", {"sessionID": session, "info": user})
    if "FAKE_QUESTION" in text:  # the question tool: the turn waits for the human's answer
        request = {"id": _id("que"), "sessionID": session,
                   "questions": [{"question": "Proceed with the plan?", "header": "Plan", "options": []}]}
        answered = threading.Event()
        QUESTIONS[request["id"]] = (request, answered)
        emit("question.asked", request)
        answered.wait()
    assistant = {"id": _id("msg"), "sessionID": session, "role": "assistant", "mode": "build", "agent": "build",
                 "cost": 0, "tokens": {"input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                 "modelID": "fake-model", "providerID": "fake", "time": {"created": int(time.time() * 1000)}}
    emit("message.updated", {"sessionID": session, "info": assistant})
    finished = dict(assistant, finish="stop", time={**assistant["time"], "completed": int(time.time() * 1000)},
                    tokens={"total": 9942, "input": 8700, "output": 42, "reasoning": 0,
                            "cache": {"write": 0, "read": 1200}})
    _append(STATE / "messages.jsonl", {"info": finished, "parts": []})
    emit("message.updated", {"sessionID": session, "info": finished})
    emit("session.status", {"sessionID": session, "status": {"type": "idle"}})
    emit("session.idle", {"sessionID": session})


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def _authorized(self) -> bool:
        password = os.environ.get("OPENCODE_SERVER_PASSWORD")
        if not password:
            return True
        expected = "Basic " + base64.b64encode(f"opencode:{password}".encode()).decode()
        if self.headers.get("Authorization") == expected:
            return True
        self._json(401, {"error": "unauthorized"})
        return False

    def _json(self, status: int, body) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"null") if length else None

    def do_GET(self) -> None:
        if not self._authorized():
            return
        path = self.path.split("?")[0]
        if path == "/doc":
            self._json(200, {"openapi": "3.1.1", "paths": {route: {METHODS.get(route, "get"): {}} for route in ROUTES}})
        elif path == "/config/providers":
            provider = json.loads((CAPTURE / "config_providers.fake.json").read_text())
            self._json(200, {"providers": [provider], "default": {"fake": "fake-model"}})
        elif path == "/session/status":
            self._json(200, {})
        elif path == "/permission":
            self._json(200, [])
        elif path == "/question":
            self._json(200, [request for request, _ in QUESTIONS.values()])
        elif path == "/event":
            self._stream()
        elif (match := re.fullmatch(r"/session/([^/]+)/message", path)):
            self._json(200, [row for row in _rows(STATE / "messages.jsonl") if row["info"]["sessionID"] == match.group(1)])
        elif (match := re.fullmatch(r"/session/([^/]+)", path)):
            sessions = {row["id"]: row for row in _rows(STATE / "sessions.jsonl")}
            if match.group(1) in sessions:
                self._json(200, sessions[match.group(1)])
            else:
                self._json(404, {"name": "NotFoundError"})
        else:
            self._json(404, {"name": "NotFoundError"})

    def do_POST(self) -> None:
        if not self._authorized():
            return
        path = self.path.split("?")[0]
        body = self._body()
        if path == "/session":
            session = {"id": _id("ses"), "slug": "stand-in", "projectID": "global", "version": VERSION,
                       "title": "stand-in", "time": {"created": int(time.time() * 1000)}}
            _append(STATE / "sessions.jsonl", session)
            self._json(200, session)
        elif (match := re.fullmatch(r"/session/([^/]+)/prompt_async", path)):
            text = "".join(part.get("text", "") for part in (body or {}).get("parts", []))
            _append(STATE / "prompt-systems.jsonl", {"system": (body or {}).get("system")})
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            threading.Thread(target=turn, args=(match.group(1), text), daemon=True).start()
        elif (match := re.fullmatch(r"/question/([^/]+)/reply", path)) and match.group(1) in QUESTIONS:
            request, answered = QUESTIONS.pop(match.group(1))
            _append(STATE / "answers.jsonl", {"requestID": request["id"], "answers": (body or {}).get("answers")})
            self._json(200, True)
            emit("question.replied", {"sessionID": request["sessionID"], "requestID": request["id"],
                                      "answers": (body or {}).get("answers")})
            answered.set()
        else:
            self._json(404, {"name": "NotFoundError"})

    def _stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        queue: list = []
        with LOCK:
            SUBSCRIBERS.append(queue)
        try:
            self.wfile.write(b'data: {"id":"evt_0","type":"server.connected","properties":{}}\n\n')
            self.wfile.flush()
            while True:
                with LOCK:
                    frames, queue[:] = list(queue), []
                for frame in frames:
                    self.wfile.write(f"data: {frame}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.02)
        except OSError:
            pass
        finally:
            with LOCK:
                SUBSCRIBERS.remove(queue)


def attach(argv: list[str]) -> int:
    """``attach URL --session ID``: a stand-in for opencode's TUI. Asks the server for the session
    with ``$OPENCODE_SERVER_PASSWORD``, shows one line saying so (and whether its stdin is its
    controlling terminal), puts the terminal in raw mode and ends on ``q`` (exit 0) or ``x``
    (exit 3), restoring the terminal; each launch appends its pid to ``attaches``."""
    import termios
    import tty
    import urllib.request

    if len(argv) != 3 or argv[1] != "--session":
        return 2
    url, session = argv[0], argv[2]
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "attaches", "a") as handle:
        handle.write(f"{os.getpid()}\n")
    token = base64.b64encode(f"opencode:{os.environ.get('OPENCODE_SERVER_PASSWORD', '')}".encode()).decode()
    request = urllib.request.Request(f"{url}/session/{session}", headers={"Authorization": f"Basic {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            found = json.loads(response.read())["id"] == session
    except (OSError, ValueError, KeyError):
        found = False
    own = os.isatty(0) and os.tcgetpgrp(0) == os.getpgrp()
    print(f"standin-tui {'attached' if found else 'refused'} {session} "
          f"{'foreground' if own else 'not-foreground'}", flush=True)
    saved = termios.tcgetattr(0)
    tty.setraw(0)
    try:
        while True:
            key = os.read(0, 1)
            if key in (b"q", b"x", b""):
                return 3 if key == b"x" else 0
    finally:
        termios.tcsetattr(0, termios.TCSADRAIN, saved)


def main(argv: list[str]) -> int:
    if argv[:1] in (["--version"], ["-v"]):
        print(os.environ.get("STANDIN_VERSION", VERSION))
        return 0
    if argv[:1] == ["attach"]:
        return attach(argv[1:])
    if argv[:1] != ["serve"]:
        return 2
    STATE.mkdir(parents=True, exist_ok=True)
    with open(STATE / "launches", "a") as handle:
        handle.write(f"{os.getpid()}\n")
    host = argv[argv.index("--hostname") + 1] if "--hostname" in argv else "127.0.0.1"
    port = int(argv[argv.index("--port") + 1]) if "--port" in argv else 0
    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    print(f"opencode server listening on http://{host}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
