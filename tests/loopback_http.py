"""A loopback HTTP endpoint in a thread (no process): it records every POST and answers with the
status a test sets, or holds the answer back until the test releases it (a server that hangs).
Stands in for a Web Push service and for an apprise ``json://`` receiver."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes


class Endpoint:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.status = 201
        self.hang = False
        self.release = threading.Event()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                endpoint.requests.append(Received(self.path, {key.lower(): value for key, value in self.headers.items()},
                                                  body))
                if endpoint.hang:
                    endpoint.release.wait(30)
                self.send_response(endpoint.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *arguments) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, name="loopback-endpoint", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
