"""A provider runtime the test scripts, on the real socket path a host connects to: it greets
with Hello and hands each Observe to the test's ``respond`` callback, sending back whatever raw
bytes that returns (well-formed results, or lies)."""

from __future__ import annotations

import os
import socket
import threading

from st2.resources import protocol
from st2.runtime import layout


class ScriptedRuntime:
    def __init__(self, scope, runtime_id: str, respond, registration: str = "reg-1",
                 capabilities=("demand",)) -> None:
        self.path = str(layout.resource_socket(scope, runtime_id))
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.respond, self.registration, self.capabilities = respond, registration, capabilities
        self.observes: list[protocol.Observe] = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen(4)
        self.connections: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            connection.sendall(protocol.encode_hello(protocol.Hello("x", self.registration, self.capabilities)))
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        reader = connection.makefile("rb")
        try:
            for line in reader:
                observe = protocol.decode_observe(line)
                self.observes.append(observe)
                for data in self.respond(observe, self):
                    if data is None:
                        connection.shutdown(socket.SHUT_RDWR)
                        connection.close()
                        return
                    connection.sendall(data)
        except OSError:
            return

    def result(self, observe, kind: str, facts=None, message=None) -> bytes:
        return protocol.encode_result(protocol.Result(kind, observe.watermark, observe.owner, observe.binding,
                                                      observe.registration, facts, message))

    def close(self) -> None:
        self.listener.close()
        for connection in self.connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)  # the reader's file object holds the socket open
                connection.close()
            except OSError:
                pass
        os.unlink(self.path)
