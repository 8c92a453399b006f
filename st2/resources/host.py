"""The host side of resource observation: one thread in ``st2 up`` (docs/resources.md §Host
acceptance).

After each supervisor pass :meth:`ResourceHost.configure` hands it this host's bindings (seat,
name, URI, the provider runtime serving the scheme, its interval and timeout). The thread
connects to each provider runtime's socket, reads its ``Hello`` and gives each registration a
generation (:mod:`st2.resources.registry`), then keeps, per binding, at most one outstanding
``Observe`` and one trailing wish for another: a periodic observation falls due after the
provider's interval, a refresh demand (:mod:`st2.resources.demand`) as soon as it is queued. A
demand arriving while an observation is open is covered by the next one, never by the open one,
so every arrival is closed by a result dispatched after it. Each result goes through
:func:`st2.resources.acceptance.accept` and one :func:`st2.resources.state.update`; the
receipts of the demands it covered are published after the record.

Refused and logged, never published: a line that is not a well-formed result, a result whose
watermark, owner, binding or registration matches no open observation on its connection (two
results for one observe, a late result after a timeout), anything from a connection that was
replaced. A runtime that dies or times out with an observation open settles it as ``Failed``.
"""

from __future__ import annotations

import os
import selectors
import socket
import threading
import time
from collections import namedtuple

from st2.resources import acceptance, demand, protocol, registry
from st2.resources import state as records
from st2.runtime import layout

Watched = namedtuple("Watched", ("agent", "name", "uri", "scheme", "seat_dir", "runtime_id", "target",
                                 "interval_seconds", "timeout_seconds", "demand"))
POLL_SECONDS = 0.2
"""How often queued demands are looked for while nothing else wakes the thread."""
RETRY_SECONDS = 1.0
"""A runtime that could not be reached is tried again after this long (it may be starting)."""


class _Open:
    __slots__ = ("watermark", "demands", "deadline", "connection")

    def __init__(self, watermark: int, demands: list[int], deadline: float, connection) -> None:
        self.watermark, self.demands, self.deadline, self.connection = watermark, demands, deadline, connection


class _Connection:
    __slots__ = ("runtime_id", "sock", "buffer", "hello", "generation")

    def __init__(self, runtime_id: str, sock: socket.socket, hello: protocol.Hello, generation: int) -> None:
        self.runtime_id, self.sock, self.buffer, self.hello, self.generation = runtime_id, sock, b"", hello, generation


class ResourceHost:
    """Observe this host's bindings through their provider runtimes; publish their states."""

    def __init__(self, scope_directory, wall_ms, say, monotonic=time.monotonic) -> None:
        self.scope = scope_directory
        self.wall_ms, self.say, self.monotonic = wall_ms, say, monotonic
        self._lock = threading.Lock()
        self._wanted: dict[tuple[str, str], Watched] = {}
        self._connections: dict[str, _Connection] = {}
        self._open: dict[tuple[str, str], _Open] = {}
        self._trailing: set[tuple[str, str]] = set()
        self._due: dict[tuple[str, str], float] = {}
        self._unreachable_since: dict[str, float] = {}
        self._retry_at: dict[str, float] = {}
        self._bell: tuple | None = ()                 # () never equals a bell: the first round scans
        self._waiting: dict[tuple[str, str], list[int]] = {}
        self._watermark = 0
        self._stop = threading.Event()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_write, False)
        self._selector = selectors.DefaultSelector()  # the wake pipe and every open connection
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._thread: threading.Thread | None = None

    # -- the supervisor's side -----------------------------------------------------------------
    def configure(self, watched: list[Watched]) -> None:
        with self._lock:
            self._wanted = {(item.agent, item.name): item for item in watched}
        self.wake()

    def wake(self) -> None:
        try:
            os.write(self._wake_write, b"x")
        except BlockingIOError:
            pass

    def due_now(self) -> None:
        """Make every binding due at once: the next round is a full observation pass."""
        self._due.clear()
        self.wake()

    def settled(self) -> bool:
        """True when no observation is open and none is wanted again."""
        return not self._open and not self._trailing

    def start(self) -> "ResourceHost":
        self._thread = threading.Thread(target=self._run, name="st2-resources", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.wake()
        if self._thread is not None:
            self._thread.join(timeout=5)
        for connection in list(self._connections.values()):
            connection.sock.close()
        self._selector.close()
        os.close(self._wake_read)
        os.close(self._wake_write)

    # -- the thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step(POLL_SECONDS)
            except Exception as error:  # the thread must outlive one bad binding; say it and go on
                self.say(f"resources: {type(error).__name__}: {error}")
                time.sleep(POLL_SECONDS)

    def step(self, wait_seconds: float) -> None:
        """One round: connect, settle expired observations, dispatch what is due, then wait at
        most ``wait_seconds`` for results and handle them."""
        with self._lock:
            wanted = dict(self._wanted)
        self._drop_unwanted(wanted)
        self._scan_demands(wanted)
        now = self.monotonic()
        for runtime_id in sorted({item.runtime_id for item in wanted.values()}):
            if runtime_id not in self._connections and self._retry_at.get(runtime_id, 0.0) <= now:
                self._connect(runtime_id, wanted)
        for key, opened in list(self._open.items()):
            if now >= opened.deadline:
                item = wanted[key]
                self._settle_failure(item, opened, "timeout", f"no result within {item.timeout_seconds:g}s")
        for key, item in sorted(wanted.items()):
            self._dispatch_if_due(key, item, now)
        for selected, _ in self._selector.select(wait_seconds):
            if selected.fileobj == self._wake_read:
                try:
                    os.read(self._wake_read, 4096)
                except BlockingIOError:
                    pass
                continue
            if self._connections.get(selected.data.runtime_id) is selected.data:
                self._receive(selected.data, wanted)

    def _scan_demands(self, wanted: dict) -> None:
        """Queued demands, listed again only when the bell rang (or a binding is new)."""
        rung = demand.bell(self.scope)
        fresh = rung != self._bell
        self._bell = rung
        for key, item in wanted.items():
            if fresh or key not in self._waiting:
                self._waiting[key] = demand.pending(layout.resource_demand(self.scope, item.agent, item.name))

    def _drop_unwanted(self, wanted: dict) -> None:
        for key in [key for key in self._open if key not in wanted]:
            del self._open[key]
        runtimes = {item.runtime_id for item in wanted.values()}
        for runtime_id in [runtime_id for runtime_id in self._connections if runtime_id not in runtimes]:
            self._close(self._connections.pop(runtime_id))

    def _connect(self, runtime_id: str, wanted: dict) -> None:
        path = str(layout.resource_socket(self.scope, runtime_id))
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(2.0)
            sock.connect(path)
            hello = protocol.decode_hello(protocol.read_line(sock.makefile("rb", buffering=0)))
        except (OSError, protocol.Refused) as error:
            sock.close()
            self._retry_at[runtime_id] = self.monotonic() + RETRY_SECONDS
            self._unreachable(runtime_id, wanted, error)
            return
        sock.setblocking(False)
        self._unreachable_since.pop(runtime_id, None)
        generation = registry.adopt(self.scope, runtime_id, hello.registration)
        self._connections[runtime_id] = connection = _Connection(runtime_id, sock, hello, generation)
        self._selector.register(sock, selectors.EVENT_READ, connection)
        self.say(f"resources: {runtime_id} connected, registration {hello.registration}, generation {generation}")

    def _close(self, connection: _Connection) -> None:
        try:
            self._selector.unregister(connection.sock)
        except (KeyError, ValueError):
            pass
        connection.sock.close()

    def _unreachable(self, runtime_id: str, wanted: dict, error: Exception) -> None:
        """A runtime that cannot be reached for longer than its timeout makes its bindings'
        records say ``unavailable`` (once)."""
        now = self.monotonic()
        since = self._unreachable_since.setdefault(runtime_id, now)
        for key, item in wanted.items():
            if item.runtime_id != runtime_id or now - since < item.timeout_seconds:
                continue
            current = records.read_file(item.seat_dir, item.agent, item.name)
            if current is None or current.last_failure is None or current.last_failure.kind != "unavailable":
                generation = current.generation if current is not None else 0
                self._write(item, acceptance.failed(current, _binding(item), generation, "unavailable",
                                                    f"the {item.scheme}: provider runtime is not reachable ({error})",
                                                    self.wall_ms()))

    def _dispatch_if_due(self, key, item: Watched, now: float) -> None:
        connection = self._connections.get(item.runtime_id)
        if connection is None:
            return
        waiting = self._waiting.get(key, [])
        if waiting and "demand" not in connection.hello.capabilities:
            queue = layout.resource_demand(self.scope, item.agent, item.name)
            demand.close(queue, waiting, demand.Receipt(item.agent, item.name, 0, "closed", protocol.FAILED, 0,
                                                        connection.generation, 0,
                                                        "the provider runtime does not take demand", self.wall_ms()))
            self._waiting[key] = waiting = []
        opened = self._open.get(key)
        if opened is not None:
            if waiting and any(seq not in opened.demands for seq in waiting):
                self._trailing.add(key)           # one trailing wish, however many arrive
            return
        due = self._due.get(key, 0.0) <= now
        if not (due or waiting or key in self._trailing):
            return
        self._trailing.discard(key)
        self._watermark = max(self._watermark + 1, self.wall_ms())
        target = dict(item.target)
        observe = protocol.Observe(self._watermark, item.agent, item.name, connection.hello.registration,
                                   item.uri, target)
        try:
            connection.sock.sendall(protocol.encode_observe(observe))
        except (OSError, protocol.Refused) as error:
            self._lost(connection, f"cannot send Observe: {error}")
            return
        self._open[key] = _Open(self._watermark, list(waiting), now + item.timeout_seconds, connection)
        self._due[key] = now + item.interval_seconds

    def _receive(self, connection: _Connection, wanted: dict) -> None:
        try:
            chunk = connection.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as error:
            chunk, reason = b"", str(error)
        else:
            reason = "closed its connection"
        if not chunk:
            self._lost(connection, reason)
            return
        connection.buffer += chunk
        while b"\n" in connection.buffer:
            line, connection.buffer = connection.buffer.split(b"\n", 1)
            self._line(connection, line + b"\n", wanted)
        if len(connection.buffer) > protocol.LINE_LIMIT:
            self._refused(connection, f"a line longer than the bound of {protocol.LINE_LIMIT} bytes", wanted)
            self._lost(connection, "sent a line over the bound")

    def _line(self, connection: _Connection, line: bytes, wanted: dict) -> None:
        if self._connections.get(connection.runtime_id) is not connection:
            self.say(f"resources: refused a line from a replaced {connection.runtime_id} connection")
            return
        try:
            result = protocol.decode_result(line)
        except protocol.Refused as refusal:
            self._refused(connection, str(refusal), wanted)
            return
        key = (result.owner, result.binding)
        opened = self._open.get(key)
        if (opened is None or opened.connection is not connection or opened.watermark != result.watermark
                or result.registration != connection.hello.registration or key not in wanted):
            self.say(f"resources: refused {result.kind} for {result.owner} {result.binding!r} watermark "
                     f"{result.watermark} from {connection.runtime_id}: no such open observation")
            return
        item = wanted[key]
        del self._open[key]
        current = records.read_file(item.seat_dir, item.agent, item.name)
        accepted = acceptance.accept(current, _binding(item), connection.generation, result.kind, result.facts,
                                     result.message, self.wall_ms())
        self._settle(item, opened, accepted, result.kind)

    def _refused(self, connection: _Connection, why: str, wanted: dict) -> None:
        """A malformed line: logged; it closes the connection's one oldest open observation as
        ``Failed`` (refused-output), since the runtime broke the protocol while answering it."""
        self.say(f"resources: refused a line from {connection.runtime_id}: {why}")
        opened = [(key, item) for key, item in self._open.items() if item.connection is connection]
        if opened:
            key, item = min(opened, key=lambda pair: pair[1].watermark)
            self._settle_failure(wanted[key], item, "refused-output", f"the runtime's answer was refused: {why}")

    def _lost(self, connection: _Connection, why: str) -> None:
        if self._connections.get(connection.runtime_id) is connection:
            del self._connections[connection.runtime_id]
        self._close(connection)
        self.say(f"resources: {connection.runtime_id} {why}")
        with self._lock:
            wanted = dict(self._wanted)
        for key, opened in list(self._open.items()):
            if opened.connection is connection and key in wanted:
                self._settle_failure(wanted[key], opened, "provider-exited",
                                     f"the provider runtime went away with the observation open ({why})")

    def _settle_failure(self, item: Watched, opened: _Open, kind: str, message: str) -> None:
        self._open.pop((item.agent, item.name), None)
        current = records.read_file(item.seat_dir, item.agent, item.name)
        accepted = acceptance.failed(current, _binding(item), opened.connection.generation, kind, message,
                                     self.wall_ms())
        self._settle(item, opened, accepted, protocol.FAILED)

    def _settle(self, item: Watched, opened: _Open, accepted: acceptance.Accepted, kind: str) -> None:
        written = self._write(item, accepted)
        if accepted.outcome is acceptance.Outcome.FENCED:
            self.say(f"resources: fenced {kind} for {item.agent} {item.name!r}: {accepted.reason}")
            self._readopt(opened.connection)
        elif accepted.outcome is acceptance.Outcome.CHANGED:
            self.say(f"resources: {item.agent} {item.name!r} revision {written.revision} {written.host_digest}")
        elif accepted.reason and accepted.outcome is not acceptance.Outcome.SAME:
            self.say(f"resources: {item.agent} {item.name!r} {accepted.outcome.value}: {accepted.reason}")
        if opened.demands:
            key = (item.agent, item.name)
            self._waiting[key] = [seq for seq in self._waiting.get(key, []) if seq not in opened.demands]
            queue = layout.resource_demand(self.scope, item.agent, item.name)
            closed_kind = protocol.FAILED if accepted.outcome in (acceptance.Outcome.FAILED,
                                                                 acceptance.Outcome.REFUSED,
                                                                 acceptance.Outcome.FENCED) else kind
            demand.close(queue, opened.demands, demand.Receipt(
                item.agent, item.name, 0, "closed", closed_kind, opened.watermark, opened.connection.generation,
                written.revision if written is not None else 0, accepted.reason, self.wall_ms()))

    def _readopt(self, connection: _Connection) -> None:
        """After a fence: a generation advanced by ``st2 agent resource recover`` for this very
        registration is taken up, so the runtime's next results are accepted again."""
        registration, generation = registry.read(self.scope, connection.runtime_id)
        if registration == connection.hello.registration and generation > connection.generation:
            connection.generation = generation
            self._trailing.update(key for key, item in self._wanted.items() if item.runtime_id == connection.runtime_id)

    def _write(self, item: Watched, accepted: acceptance.Accepted) -> records.State | None:
        if accepted.state is None:
            return records.read_file(item.seat_dir, item.agent, item.name)
        wanted_state = accepted.state
        return records.update(item.seat_dir, item.agent, item.name,
                              lambda current: _fenced(current, wanted_state), self.wall_ms())


def _fenced(current: records.State | None, proposed: records.State) -> records.State | None:
    """Under the record's lock: never replace a record of a higher generation or revision."""
    if current is not None and (current.generation > proposed.generation or current.revision > proposed.revision):
        return None
    return proposed


def _binding(item: Watched) -> acceptance.Binding:
    return acceptance.Binding(item.agent, item.name, item.uri)


