"""The full wrapper's side of the slim anchor (:mod:`st2.drivers.anchor`; docs/memory.md
§The Claude wrapper's slim anchor): when a
:class:`~st2.drivers.child_session.ChildSession` whose driver sets ``anchors`` has its harness
running, it ``exec``\\ s into the anchor, and the anchor ``exec``\\ s back here with what
happened. Only the Claude wrapper anchors (pi and omp read a channel continuously, the native
wrappers serve a protocol: they stay resident).

- :func:`take_continuation` reads and removes ``ST2_SESSION_CONTINUATION`` (so no harness ever
  inherits it). Only the shapes the anchor produces are accepted — ``reaped <returncode>``,
  ``stopping <15|1> <monotonic arrival>``, ``refresh`` — each followed by the state this module
  wrote (``{"pid","token","seq","start","resumeId"}``); anything else raises
  :class:`MalformedContinuation`, and the wrapper then runs resident (the unanchored path) and
  says so once.
- :meth:`Anchor.enter` blocks ``SIGTERM``/``SIGHUP``/``SIGINT``/``SIGCHLD`` (the mask and
  pending signals survive ``exec``, so no stop is lost in the window), gives up if a stop is
  already queued or the harness already ended, registers the session with the scope's seat host
  for its five-minute duties when one answers (:mod:`st2.seathost.keeper`; the descriptor is
  inherited by the anchor and its end ends the registration), and ``exec``\\ s
  ``python -S -I -c <import the anchor file> <anchor file> …``. The exec-back command is this process's own command line
  (``sys.orig_argv``), so the route that parsed it the first time parses it again.
- :func:`resume_signals` unblocks those signals once the handlers are installed (a stop that
  arrived during the exec back is then delivered and acted on).
- :class:`Adopted` is the harness as a Popen-like child of a process that did not spawn it in
  this image (``waitpid`` on the PID).

The anchor cannot be used — and the wrapper stays resident, saying so once on the PTY —
when its file is not a file on disk (st2 imported from an archive), the interpreter is
unknown, or this process's command line cannot be reconstructed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import NamedTuple

ANCHOR_FILE = Path(__file__).resolve().with_name("anchor.py")
ANCHOR_CODE = "import sys;sys.path[:0]=[sys.argv[1].rpartition('/')[0]];import anchor;anchor.run(sys.argv[2:])"
"""How the interpreter runs the anchor: imported, so it loads from its cached bytecode; run as a
script it would be compiled, and its code held privately, in every seat."""
CONTINUATION_ENV = "ST2_SESSION_CONTINUATION"
REFRESH_TEST_ENV = "ST2_TEST_SESSION_REFRESH_SECONDS"
"""Test-only: the refresh interval in seconds (the production path never sets it: five minutes)."""
MASKED = {signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGCHLD}
STOPS = (int(signal.SIGTERM), int(signal.SIGHUP))
STARTS = ("fresh", "resuming", "resumed", "fallback")


class MalformedContinuation(ValueError):
    """The continuation is not one the anchor produces."""


class Continuation(NamedTuple):
    event: str                  # reaped | stopping | refresh
    returncode: int | None      # reaped: the harness's returncode (-n for signal n)
    signal_number: int | None   # stopping: SIGTERM or SIGHUP
    arrived: float | None       # stopping: monotonic seconds when the anchor took the signal
    pid: int
    token: str
    seq: int
    start: str | None           # the resume binding's start, None without a binding
    resume_id: str | None


def take_continuation(environ=None) -> Continuation | None:
    """Remove the continuation from the environment and decode it; None when there is none."""
    environ = os.environ if environ is None else environ
    raw = environ.pop(CONTINUATION_ENV, None)
    return None if raw is None else decode(raw)


def decode(raw: str) -> Continuation:
    words = raw.split(" ", 3)
    event = words[0]
    try:
        if event == "reaped" and len(words) >= 3:
            returncode, signal_number, arrived, state = _int(words[1]), None, None, raw.split(" ", 2)[2]
        elif event == "stopping" and len(words) == 4:
            returncode, signal_number, arrived, state = None, _int(words[1]), float(words[2]), words[3]
            if signal_number not in STOPS or arrived != arrived or arrived < 0:
                raise ValueError
        elif event == "refresh" and len(words) >= 2:
            returncode, signal_number, arrived, state = None, None, None, raw.split(" ", 1)[1]
        else:
            raise ValueError
        fields = json.loads(state)
        pid, token, seq = fields["pid"], fields["token"], fields["seq"]
        start, resume_id = fields["start"], fields["resumeId"]
    except (ValueError, KeyError, TypeError, IndexError, RecursionError):
        raise MalformedContinuation(f"{CONTINUATION_ENV} is not a continuation the anchor writes") from None
    if not (type(pid) is int and pid > 1 and isinstance(token, str) and token and type(seq) is int and seq >= 0
            and (start is None or start in STARTS) and (resume_id is None or isinstance(resume_id, str))):
        raise MalformedContinuation(f"{CONTINUATION_ENV} carries a state the wrapper never writes")
    return Continuation(event, returncode, signal_number, arrived, pid, token, seq, start, resume_id)


def _int(word: str) -> int:
    if not word.lstrip("-").isdigit():
        raise ValueError(word)
    return int(word)


def encode_state(pid: int, token: str, seq: int, start: str | None, resume_id: str | None) -> str:
    return json.dumps({"pid": pid, "token": token, "seq": seq, "start": start, "resumeId": resume_id},
                      separators=(",", ":"))


def resume_signals() -> None:
    """Unblock what the anchor kept blocked (call once the handlers are installed)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, MASKED)


def own_command() -> list[str] | None:
    """This process's command line with the interpreter spelled as ``sys.executable``, or None
    when it cannot be reconstructed."""
    original, argv = list(getattr(sys, "orig_argv", [])), list(sys.argv)
    cut = len(original) - len(argv) + 1
    if not sys.executable or not argv or cut < 2 or original[cut:] != argv[1:]:
        return None
    return [sys.executable, *original[1:cut], *argv[1:]]


def refresh_seconds(environ=None) -> float | None:
    """The test-only refresh interval override, or None (five minutes)."""
    value = (os.environ if environ is None else environ).get(REFRESH_TEST_ENV)
    try:
        seconds = float(value) if value else 0.0
    except ValueError:
        return None
    return seconds if 0 < seconds < 3600 else None


class Adopted:
    """The harness, a child of this process from before the last ``exec`` (Popen's interface as
    the wrapper loop uses it: ``pid``, ``returncode``, ``poll``, ``wait``, ``terminate``, ``kill``)."""

    def __init__(self, pid: int, returncode: int | None = None) -> None:
        self.pid = pid
        self.returncode = returncode

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                self.returncode = 255   # not our child any more: nothing can tell its status
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            try:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:
                self.returncode = 255
        return self.returncode

    def _signal(self, number: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, number)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)


class Anchor:
    """How this wrapper execs into the anchor (see the module docstring)."""

    def __init__(self, command: list[str], say, keep=None) -> None:
        self.command = command
        self.say = say
        self.keep = keep   # st2.seathost.keeper's client side, when a host may serve this scope

    @classmethod
    def usable(cls, say, keep=None) -> "Anchor | None":
        """The anchor, or None after saying once why the wrapper stays resident."""
        command = own_command()
        if command is None:
            say("staying resident: this wrapper's command line cannot be rebuilt for the way back")
            return None
        if not ANCHOR_FILE.is_file():
            say(f"staying resident: {ANCHOR_FILE} is not a file this interpreter can run")
            return None
        return cls(command, say, keep)

    def enter(self, session) -> None:
        """Exec into the anchor. Returns only when a stop is queued or the harness ended inside
        the blocked window (the loop handles it now), or when the exec failed (the wrapper then
        stays resident: :attr:`session.anchor` is cleared, and that is said once)."""
        records, binding = session.records, session.binding
        due = records.next_presence
        # Registered before the mask: a stop arriving meanwhile is queued by the handler, seen below.
        keep, request, path = (self.keep.register(records, due) if self.keep is not None else (-1, "-", "-"))
        signal.pthread_sigmask(signal.SIG_BLOCK, MASKED)
        if session.requests or session.child.poll() is not None:
            if keep >= 0:
                os.close(keep)
            resume_signals()
            return
        state = encode_state(session.child.pid, records.token, records.seq,
                             binding.start.value if binding is not None else None,
                             binding.resume_id if binding is not None else None)
        argv = [sys.executable, "-S", "-I", "-c", ANCHOR_CODE, str(ANCHOR_FILE), str(session.child.pid), str(keep),
                repr(records.refresh_seconds), repr(due), path, request, state, *self.command]
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            os.execv(sys.executable, argv)
        except OSError as error:
            if keep >= 0:
                os.close(keep)
            resume_signals()
            session.anchor = None
            self.say(f"staying resident: cannot exec the anchor ({error.strerror or error})")


def adopt(session, continuation: Continuation) -> None:
    """Take over the session the anchor held (``session`` a ChildSession, not yet started)."""
    session.adopt(continuation.pid, continuation.token, continuation.seq, continuation.start,
                  continuation.resume_id, continuation.returncode)
    if continuation.event == "stopping":
        elapsed = max(0.0, session.clock.monotonic() - continuation.arrived)
        session.stop_grace = max(0.0, session.stop_grace - elapsed)
        session.requests.append(continuation.signal_number)
    elif continuation.event == "refresh":
        session.records.refresh_now()


class KeepClient:
    """The wrapper's side of a ``keep`` registration (:mod:`st2.seathost.keeper`) with the
    scope's seat host."""

    def __init__(self, socket_path: Path, seat, harness: str, runtime_id: str, clock) -> None:
        self.path = Path(socket_path)
        self.seat = seat
        self.harness = harness
        self.runtime_id = runtime_id
        self.clock = clock

    def body(self, records, due_in_seconds: float) -> dict:
        from st2.seathost.keeper import request

        return request(Path(os.path.abspath(self.seat.directory)), self.seat.agent, self.harness, self.runtime_id,
                       records.token, records.seq, records.refresh_seconds, round(due_in_seconds, 3))

    def register(self, records, due: float) -> tuple[int, str, str]:
        """``(descriptor or -1, the anchor's pre-encoded re-registration, the socket path)``: the
        registration held on an inheritable descriptor when a host answers now."""
        from st2.seathost import wire

        again = json.dumps(self.body(records, 0), separators=(",", ":")) + "\n"
        try:
            connection = wire.connect(self.path, timeout=2.0)
        except OSError:
            return -1, again, str(self.path)
        try:
            wire.send(connection, self.body(records, max(0.0, due - self.clock.monotonic())))
            answer, extra = wire.receive(connection)
            for descriptor in extra:
                os.close(descriptor)
        except OSError:
            connection.close()
            return -1, again, str(self.path)
        if answer.get("ok") is not True:
            connection.close()
            return -1, again, str(self.path)
        connection.setblocking(False)
        descriptor = connection.detach()
        os.set_inheritable(descriptor, True)
        return descriptor, again, str(self.path)


def keeper_client(catalog, session) -> KeepClient | None:
    """The keep registration's client for the session's scope, or None when its socket path
    could never be bound (the anchor then execs back for every refresh)."""
    from st2.runtime.scope import RuntimeScope
    from st2.seathost import wire

    try:
        scope = RuntimeScope(Path(os.path.abspath(catalog)), session.seat.agent.split(".", 1)[0])
        path = wire.socket_path(scope.directory)
    except Exception as error:  # no scope to find a host in: every refresh comes back here
        session.say(f"no seat host can keep this session ({error}); the wrapper returns for each refresh")
        return None
    from st2.seathost.client import SUN_PATH_LINUX

    if len(os.fsencode(str(path))) + 1 > SUN_PATH_LINUX:
        return None
    return KeepClient(path, session.seat, session.harness, session.runtime_id, session.clock)
