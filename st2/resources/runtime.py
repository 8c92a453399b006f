"""A built-in provider runtime: ``st2 resource-runtime <scheme>`` (docs/resources.md §Protocol).

A host task the supervisor launches per seat and scheme. It listens on the unix socket named by
``ST2_RESOURCE_SOCKET`` (the host-local path :func:`st2.runtime.layout.resource_socket`), greets
each connection with ``Hello`` (its scheme, a registration token fresh for this process, its
capabilities) and answers every ``Observe`` with exactly one result, one at a time. A new
connection (a restarted supervisor) replaces the old one. The runtime remembers, per owner and
binding, the facts it last published on this registration, and answers ``Unchanged`` only when
they are the same again; a restarted runtime remembers nothing and publishes.
"""

from __future__ import annotations

import os
import selectors
import socket
import sys

from st2.resources import protocol
from st2.resources.observers import OBSERVERS, ObservationFailed
from st2.resources.state import canonical_facts

SOCKET_VARIABLE = "ST2_RESOURCE_SOCKET"


def registration_token() -> str:
    """Fresh per process: the pid and 12 random bytes (a restart never reuses one)."""
    return f"{os.getpid()}-{os.urandom(12).hex()}"


def answer(observe: protocol.Observe, scheme: str, memory: dict) -> protocol.Result:
    """The one result for ``observe``, from the built-in observer of ``scheme``."""
    address = (observe.watermark, observe.owner, observe.binding, observe.registration)
    try:
        facts = OBSERVERS[scheme](observe.target)
    except ObservationFailed as failure:
        return protocol.Result(protocol.FAILED, *address, None, str(failure))
    key = (observe.owner, observe.binding)
    seen = canonical_facts(facts)
    if memory.get(key) == seen:
        return protocol.Result(protocol.UNCHANGED, *address, None, None)
    memory[key] = seen
    return protocol.Result(protocol.PUBLISHED, *address, facts, None)


def serve(scheme: str, path: str, log=sys.stderr) -> int:
    """Serve until killed. Return 2 when the socket cannot be bound."""
    if scheme not in OBSERVERS:
        print(f"st2 resource-runtime: no built-in provider for scheme {scheme!r}", file=log)
        return 2
    registration = registration_token()
    hello = protocol.encode_hello(protocol.Hello(scheme, registration, ("demand",)))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            os.unlink(path)  # a dead predecessor's socket: one runtime per task id is the supervisor's rule
        except FileNotFoundError:
            pass
        listener.bind(path)
        listener.listen(4)
    except OSError as error:
        print(f"st2 resource-runtime: cannot listen on {path}: {error.strerror or error}", file=log)
        return 2
    print(f"resource runtime {scheme} listening on {path} as {registration}", file=log, flush=True)
    _Server(listener, hello, registration, scheme, log).run()
    return 0


class _Server:
    """One listener, at most one host connection at a time, one result per Observe."""

    def __init__(self, listener, hello: bytes, registration: str, scheme: str, log) -> None:
        self.listener, self.hello, self.registration, self.scheme, self.log = listener, hello, registration, scheme, log
        self.selector = selectors.DefaultSelector()
        self.selector.register(listener, selectors.EVENT_READ)
        self.connection = None
        self.buffer = b""
        self.memory: dict = {}

    def run(self) -> None:
        while True:
            for key, _ in self.selector.select():
                try:
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        self._read()
                except OSError as error:  # the host went away mid-write: wait for the next one
                    self._say(f"connection lost: {error}")
                    self._drop()

    def _say(self, line: str) -> None:
        print(line, file=self.log, flush=True)

    def _drop(self) -> None:
        if self.connection is not None:
            self.selector.unregister(self.connection)
            self.connection.close()
        self.connection, self.buffer = None, b""

    def _accept(self) -> None:
        incoming, _ = self.listener.accept()
        self._drop()                                  # a new host connection replaces the old one
        self.connection = incoming
        self.selector.register(incoming, selectors.EVENT_READ)
        incoming.sendall(self.hello)

    def _read(self) -> None:
        chunk = self.connection.recv(65536)
        if not chunk:
            self._drop()
            return
        self.buffer += chunk
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            try:
                observe = protocol.decode_observe(line + b"\n")
            except protocol.Refused as refusal:
                self._say(f"refused a host line: {refusal}")
                continue
            if observe.registration != self.registration:
                self._say(f"refused an Observe for registration {observe.registration}")
                continue
            result = answer(observe, self.scheme, self.memory)
            try:
                data = protocol.encode_result(result)
            except protocol.Refused as refusal:
                data = protocol.encode_result(result._replace(kind=protocol.FAILED, facts=None, message=str(refusal)))
            self.connection.sendall(data)
        if len(self.buffer) > protocol.LINE_LIMIT:
            self._say("refused a host line over the bound; dropped the connection")
            self._drop()


def route(call) -> int:
    """``st2 resource-runtime <scheme>`` on the front door's click-free route for a runtime the
    seat host forks (:mod:`st2.front.table`): click's parse would copy its pages out of the
    host's shared heap (docs/memory.md §Resource provider runtimes)."""
    return main(call.parsed.positionals[0])


def main(scheme: str) -> int:
    path = os.environ.get(SOCKET_VARIABLE)
    if not path:
        print(f"st2 resource-runtime: {SOCKET_VARIABLE} is not set (the supervisor launches this)", file=sys.stderr)
        return 2
    return serve(scheme, path)
