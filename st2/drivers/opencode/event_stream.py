"""The opencode wrapper's event stream: ``GET /event`` on a thread of its own (:class:`EventStream`),
every outcome handed to the wrapper's loop through a queue and a byte on its wake-up pipe."""

from __future__ import annotations

import os
import queue
import socket
import threading

from st2.drivers.opencode.api import Client, SseParser

CALL_SECONDS = 15.0
"""The bound of one API call, and of the stream's connect."""
BACKOFF_SECONDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
"""The stream's reconnect (and the server's restart) backoff, one step per failure in a row."""


class EventStream(threading.Thread):
    """``GET /event`` on its own connection; every outcome goes to ``inbox`` as ``("connected",)``,
    ``("event", e)`` or ``("down", reason)``, and a byte to ``wake`` (the loop's pipe). Reconnects
    with :data:`BACKOFF_SECONDS` until :meth:`stop`."""

    def __init__(self, client: Client, inbox: queue.Queue, wake: int) -> None:
        super().__init__(daemon=True)
        self.client = client
        self.inbox = inbox
        self.wake = wake
        self.stopping = threading.Event()
        self._sock = None

    def _put(self, item) -> None:
        self.inbox.put(item)
        try:
            os.write(self.wake, b"e")
        except OSError:
            pass

    def stop(self) -> None:
        self.stopping.set()
        sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def run(self) -> None:
        failures = 0
        while not self.stopping.is_set():
            connection = self.client.connection(timeout=CALL_SECONDS)
            connected = False
            try:
                # Our own socket: http.client drops its reference once a response reads to close.
                connection.sock = self._sock = socket.create_connection((self.client.host, self.client.port),
                                                                        timeout=CALL_SECONDS)
                connection.request("GET", "/event", headers={**self.client.headers, "Accept": "text/event-stream"})
                response = connection.getresponse()
                if response.status != 200:
                    raise OSError(f"HTTP {response.status}")
                self._sock.settimeout(None)  # a quiet stream is not a failure; stop() shuts it down
                parser = SseParser()
                connected = True
                failures = 0
                self._put(("connected",))
                while not self.stopping.is_set():
                    chunk = response.read1(65536)
                    if not chunk:
                        break
                    for event in parser.feed(chunk):
                        self._put(("event", event))
                reason = "sseDisconnected"
            except Exception:  # any failure of the stream is one reconnect
                reason = "sseDisconnected" if connected else "sseConnectFailed"
            finally:
                connection.close()
                self._sock = None
            if self.stopping.is_set():
                return
            self._put(("down", reason))
            self.stopping.wait(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)])
            failures += 1
