"""The seat host's wire: one unix stream socket per runtime scope (``<scope>/seat-host.sock``),
one JSON request line per connection, file descriptors passed beside it with ``SCM_RIGHTS``.

Requests (``op``):

- ``hello`` → ``{"protocol", "build", "pid", "watching", "registrants", "kept", "inotify",
  "zygote"}``: who serves, for which build, how many seat watches it serves and the registrants'
  PIDs, whether it holds its inotify instance, and the PID of the zygote that forks for it
  (:mod:`st2.seathost.zygote`; null when it has none right now);
- ``fork`` ``{argv, env, cwd, runtimeId, build}`` + the task's log descriptor →
  ``{"pid", "startTicks"}`` or ``{"error"}``: start one per-seat process (see
  :mod:`st2.seathost.fork`); refused when ``build`` is not the host's own;
- ``fork-session`` ``{argv, env, cwd, umask, encoding, errors, build}`` + the pane's stdin,
  stdout, stderr and the wrapper's end of the anchor's status socket → ``{"pid",
  "startTicks"}`` or ``{"error"}``: fork a native seat's session wrapper onto the pane's
  terminal (see :mod:`st2.seathost.session_fork`); refused when ``build`` is not the host's own;
- ``watch`` ``{seat}`` + the write end of the caller's wake pipe → ``{"ok": true}``, then the
  connection stays open for the registration's lifetime: the host writes one byte into the
  pipe per relevant mutation of the seat, and either side closing ends it;
- ``keep`` ``{seat, agent, harness, runtimeId, incarnation, claimedSeq, refreshSeconds,
  dueInSeconds}`` → ``{"ok": true, "pid"}`` or ``{"error"}``, then the connection stays open for
  the registration's lifetime: the host serves that session's presence refresh and observed-state
  heartbeat (:mod:`st2.seathost.keeper`) until either side closes it; ``hello`` lists each one
  as ``kept`` ``[{"pid", "refreshes"}]``;
- ``retire`` → ``{"ok": true}``: the host stops listening, removes its socket and exits (its
  forked processes keep running).

A line is read within bounds whoever sent it: at most :data:`LINE_LIMIT` bytes, whole within the
connection's timeout (one deadline for the line, not one per read, so a sender trickling bytes
cannot hold a server past it), decoded by :func:`st2.records.decoding.load_object` (strict UTF-8
JSON, one object; a 1,000-deep nesting is refused like any other malformed line). Every such
failure is one :class:`WireError`; a server drops that connection, says so through
:class:`DropLog` (one bounded, printable line, rate-limited) and serves on.

Standard library only: every per-seat process that talks to the host imports this.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from st2.records.decoding import Malformed, load_object
from st2.runtime import layout

PROTOCOL = "st2.seat-host.v1"
LINE_LIMIT = 1 << 20          # a fork request carries a whole environment
MAX_DESCRIPTORS = 5         # a fork-session request with a TUI anchor's reply pipe
TIMEOUT_SECONDS = 5.0
REQUEST_SECONDS = 2.0       # a server's bound on one request line (a local peer writes it at once)
DROP_LOG_SECONDS = 10.0     # DropLog: at most one line per this many seconds
DROP_LOG_CHARACTERS = 200


class WireError(OSError):
    """The other side did not answer with one well-formed line."""


class WireClosed(WireError):
    """The other side closed the connection before a whole line."""


class WireTimeout(WireError):
    """No whole line came within the connection's timeout (the other side is slow, stopped or
    trickling)."""


def socket_path(scope_directory: Path) -> Path:
    return layout.seat_host_socket(Path(scope_directory))


def lock_path(scope_directory: Path) -> Path:
    return layout.seat_host_lock(Path(scope_directory))


_BUILD: list[str] = []   # computed once per process (a forked child inherits it untouched)


def build_id() -> str:
    """The code a fork would run: this interpreter (the file it resolves to, and its
    environment's prefix), the st2 package's location and version. A host of another build never
    forks for this one (a replaced binary gets a new host). The names one environment gives its
    interpreter (``bin/python``, ``bin/python3`` — the ``st2`` script's shebang — and
    ``bin/python3.11``) are one build: ``python -m st2 up`` and the ``st2`` script it starts the
    seat host with must agree, or the supervisor waits out the start bound on every pass."""
    if not _BUILD:
        _BUILD.append(_compute_build_id())
    return _BUILD[0]


def _compute_build_id() -> str:
    import st2
    from st2.base.digest import sha256

    digest = sha256()
    for value in (os.path.realpath(sys.executable), sys.prefix, os.path.dirname(os.path.abspath(st2.__file__)), st2.__version__,
                  sys.version):
        digest.update(value.encode() + b"\0")
    return "sha256:" + digest.hexdigest()[:32]


def send(connection: socket.socket, body: dict, descriptors: tuple[int, ...] = ()) -> None:
    data = json.dumps(body, separators=(",", ":")).encode() + b"\n"
    if descriptors:
        sent = socket.send_fds(connection, [data], list(descriptors))
        data = data[sent:]
    if data:
        connection.sendall(data)


def receive(connection: socket.socket) -> tuple[dict, list[int]]:
    """One request or answer line and the descriptors that came with it. Raise
    :class:`WireError` on end of stream, an overlong line, a line not whole within the
    connection's timeout (one deadline for the whole line; none for a blocking connection) or
    anything but one strict JSON object (:func:`st2.records.decoding.load_object`).

    Nothing past the line's newline is consumed: a second line already sent (a DING seat that
    ended at once sends its ``exit`` line right behind the registration's answer) stays for the
    next read. The line's extent is found by peeking, and exactly that much is read."""
    chunks, descriptors, size = [], [], 0
    timeout = connection.gettimeout()
    deadline = None if not timeout else time.monotonic() + timeout
    try:
        while True:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise WireTimeout(f"no whole line within {timeout:g}s on the seat host connection")
                connection.settimeout(remaining)
            try:
                peeked = connection.recv(65536, socket.MSG_PEEK)
                newline = peeked.find(b"\n")
                data, received, _, _ = socket.recv_fds(connection, newline + 1 if newline >= 0 else max(len(peeked), 1),
                                                       MAX_DESCRIPTORS)
            except TimeoutError as error:
                raise WireTimeout(f"no whole line within {timeout:g}s on the seat host connection") from error
            descriptors += received
            if not data:
                raise WireClosed("the seat host connection closed before a whole line")
            chunks.append(data)
            size += len(data)
            if data.endswith(b"\n"):
                break
            if size > LINE_LIMIT:
                raise WireError("overlong line on the seat host connection")
        try:
            body = load_object(b"".join(chunks).split(b"\n", 1)[0])
        except Malformed as error:
            if str(error) == "not a JSON object":
                raise WireError("the seat host connection carried a line that is not a JSON object") from error
            raise WireError(f"the seat host connection carried a line that is not JSON: {error}") from error
    except BaseException:
        _close_all(descriptors)
        raise
    finally:
        if deadline is not None:
            connection.settimeout(timeout)
    return body, descriptors


def answer_one(listener: socket.socket, handle, drops: "DropLog") -> None:
    """Accept one pending connection on the non-blocking ``listener`` and answer its request
    line with ``handle(connection, body, descriptors)``, which returns True to keep the
    connection open (a registration). A line :func:`receive` refuses within
    :data:`REQUEST_SECONDS` is answered ``{"error": "unreadable request: …"}``; a handler's
    ``OSError`` (the peer gone) is only said; any other exception (a handler's bug) is answered
    ``{"error": "internal error: …"}``. Each is said through ``drops`` and closed, and the server
    serves on. One per call: a server's loop serves its other descriptors between two, however
    many peers wait."""
    try:
        connection, _ = listener.accept()
    except (BlockingIOError, InterruptedError):
        return
    connection.settimeout(REQUEST_SECONDS)
    keep = False
    answer = None
    try:
        body, descriptors = receive(connection)
    except OSError as error:
        drops.dropped(str(error))
        answer = f"unreadable request: {error}"
    else:
        try:
            keep = handle(connection, body, descriptors)
        except OSError as error:
            drops.dropped(str(error))
        except Exception as error:
            drops.dropped(f"a request failed: {type(error).__name__}: {error}")
            answer = f"internal error: {type(error).__name__}: {error}"
    if answer is not None:
        try:
            send(connection, {"error": printable(answer)})
        except OSError:
            pass
    if not keep:
        connection.close()


def printable(text: str, limit: int = DROP_LOG_CHARACTERS) -> str:
    """``text`` as one bounded log line: control characters (C0, DEL, C1, line separators)
    become ``?`` and anything past ``limit`` characters is cut (marked ``…``)."""
    cleaned = "".join(character if character.isprintable() else "?" for character in text[:limit + 1])
    return cleaned if len(cleaned) <= limit else cleaned[:limit] + "…"


class DropLog:
    """A server's account of requests it dropped: the first one in each
    :data:`DROP_LOG_SECONDS` is said at once, one bounded printable line (:func:`printable`),
    and how many more were dropped meanwhile is said with the next one said, so a peer sending
    garbage in a loop cannot fill the log."""

    def __init__(self, say, clock=time.monotonic) -> None:
        self.say = say
        self.clock = clock
        self.said_at: float | None = None
        self.unsaid = 0

    def dropped(self, why: str) -> None:
        now = self.clock()
        if self.said_at is not None and now - self.said_at < DROP_LOG_SECONDS:
            self.unsaid += 1
            return
        more = f" ({self.unsaid} more dropped since the last one said)" if self.unsaid else ""
        self.said_at, self.unsaid = now, 0
        self.say(f"dropped a request: {printable(why)}{more}")


def _close_all(descriptors: list[int]) -> None:
    for descriptor in descriptors:
        try:
            os.close(descriptor)
        except OSError:
            pass


def connect(path: Path, timeout: float = TIMEOUT_SECONDS) -> socket.socket:
    """A connection to the host on ``path``; raise OSError when none answers."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    connection.settimeout(timeout)
    try:
        connection.connect(str(path))
    except OSError:
        connection.close()
        raise
    return connection


def request(path: Path, body: dict, descriptors: tuple[int, ...] = (),
            timeout: float = TIMEOUT_SECONDS) -> dict:
    """One request and its answer over a fresh connection; raise OSError when no host answers."""
    with connect(path, timeout) as connection:
        send(connection, body, descriptors)
        answer, extra = receive(connection)
        _close_all(extra)
        return answer


def peer_pid(connection: socket.socket) -> int | None:
    """The PID of the process on the other end of a unix connection (``SO_PEERCRED``)."""
    import struct

    try:
        credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return struct.unpack("3i", credentials)[0]
    except OSError:
        return None


def listen(path: Path, backlog: int) -> tuple[socket.socket, int]:
    """A non-blocking owner-only listener bound on ``path`` (whatever was there removed: the
    caller holds the lock that makes it the only server) and the inode it bound."""
    path = Path(path)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    previous = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(previous)
    inode = os.stat(path).st_ino
    listener.listen(backlog)
    listener.setblocking(False)
    return listener, inode
