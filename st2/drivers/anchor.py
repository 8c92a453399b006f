"""The slim anchor: what a Claude seat's wrapper process is while Claude runs.

The wrapper (``st2 driver claude-session``, :mod:`st2.drivers.claude.session` over
:class:`st2.drivers.child_session.ChildSession`) must stay the PTY task's own process and
Claude's parent for the seat's whole life, so it cannot be forked from a shared parent, and
whatever it imports is paid per seat (docs/memory.md §The Claude wrapper's slim anchor). So once
the full wrapper has claimed the session, decided the resume and spawned ``claude``, it
``exec``\\ s itself into this file, imported by ``python -S -I -c <code> <this file> …`` (from its
cached bytecode, never compiled per seat). This module imports only built-in modules
(``posix``, ``_signal``, ``time``; ``_socket`` only when re-registering with a seat host).
``exec`` keeps the PID, the start time (the launch record's identity), the session, the process
group, the controlling terminal and the child: ``waitpid`` on Claude still works here.

What this process does, nothing more:

- wait for Claude (``SIGCHLD``, ``SIGTERM``, ``SIGHUP`` and ``SIGINT`` stay blocked — they were
  blocked across the exec, so none is lost in the window — and are taken synchronously with
  ``sigtimedwait``; ``SIGINT`` is consumed and ignored: ^C is the harness's key, never the
  wrapper's end, and no disposition here reaches a child, since the anchor starts none);
- on ``SIGTERM``/``SIGHUP``: ``exec`` back at once into the full wrapper with
  ``stopping <signal> <monotonic arrival>``, which runs the same stop with its cover as a
  resident wrapper, its grace counted from the arrival (so the cover lands inside the
  supervisor's 3 s escalation);
- on Claude's reap: ``exec`` back with ``reaped <returncode>`` (the terminal ``ended`` record,
  the resume-refusal check and the one fresh fallback are the full wrapper's);
- the five-minute duties (presence refresh, observed-state heartbeat) are the seat host's while
  a keep registration (:mod:`st2.seathost.keeper`) is held on the inherited descriptor; the
  anchor checks it every :data:`HOST_CHECK_SECONDS` (a tenth of the refresh interval when that
  is shorter) and when a refresh is due. A host that is
  gone is replaced by re-registering (the pre-encoded request it was given, so no ``json``)
  when one answers; when none answers the anchor ``exec``\\ s back with ``refresh`` whenever a
  refresh falls due, and the full wrapper refreshes and comes back here — the refresh never
  silently stops. Not at once on the loss: the host served the refresh that fell due before it,
  so waiting for the next keeps every record inside its stale horizon (a host that died between
  a due refresh and serving it leaves at most two intervals, 10 of the 15 minutes), and a
  fleet's anchors do not all exec back in the same instant when their shared host goes.

The continuation travels in the environment variable ``ST2_SESSION_CONTINUATION``
(``<event words> <state>``; the state is the full wrapper's own JSON, opaque here), and the
exec-back command is the wrapper's own original command line, so the same route (click-free
or click) parses it again. Arguments, all from the full wrapper
(:mod:`st2.drivers.session_anchor`)::

    <child pid> <keep fd or -1> <refresh seconds> <monotonic refresh due> <socket path or -> \
        <pre-encoded keep request or -> <state> <exec-back argv…>

Should the exec back itself fail (the interpreter removed under a running seat), the anchor says
so on the PTY and does what it can without the record modules: on a stop it signals the group it
leads (or Claude) and SIGKILLs Claude past the grace; on a reap it exits with Claude's status —
no terminal record, the same limit as a wrapper killed with SIGKILL (the reader's PTY liveness
cross-check covers it).
"""

import _signal
import posix
import time

CONTINUATION = b"ST2_SESSION_CONTINUATION"
HOST_CHECK_SECONDS = 30.0
STOP_GRACE_SECONDS = 2.0
WATCHED = {_signal.SIGCHLD, _signal.SIGTERM, _signal.SIGHUP, _signal.SIGINT}
STOPS = (_signal.SIGTERM, _signal.SIGHUP)


def say(line):
    try:
        posix.write(2, ("st2 claude-session: " + line + "\n").encode())
    except OSError:
        pass


def gone(keep):
    """Whether the host's end of the keep registration closed (the host never sends)."""
    try:
        return posix.read(keep, 64) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def register(path, request):
    """A new keep registration's descriptor, or -1 when no host answers on ``path``."""
    if path == "-" or request == "-":
        return -1
    try:
        posix.stat(path)
    except OSError:
        return -1
    import _socket

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.settimeout(2.0)
        connection.connect(path)
        connection.sendall(request.encode())
        answer = b""
        while b"\n" not in answer and len(answer) < 4096:
            data = connection.recv(4096)
            if not data:
                break
            answer += data
    except OSError:
        connection.close()
        return -1
    if b'"ok":true' not in answer.split(b"\n", 1)[0]:
        connection.close()
        return -1
    connection.setblocking(False)
    return connection.detach()


def back(command, keep, event, state):
    """``exec`` into the full wrapper with ``event``; return only when that failed."""
    if keep >= 0:
        try:
            posix.close(keep)
        except OSError:
            pass
    environment = dict(posix.environ)
    environment[CONTINUATION] = (event + " " + state).encode()
    try:
        posix.execve(command[0], command, environment)
    except OSError as error:
        say("cannot return to the full wrapper (%s); this seat's records are not written" % error)


def wait_status(child, timeout):
    """Claude's returncode once reaped within ``timeout`` seconds, else None."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, status = posix.waitpid(child, posix.WNOHANG)
        except ChildProcessError:
            return 255
        if pid == child:
            return posix.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        _signal.sigtimedwait({_signal.SIGCHLD}, 0.05)


def exit_status(returncode):
    return 128 - returncode if returncode < 0 else returncode


def stop_alone(child, number):
    """The stop without the full wrapper: TERM, the grace, then SIGKILL; exit with the status."""
    try:
        if posix.getpgrp() == posix.getpid():
            posix.killpg(posix.getpgrp(), _signal.SIGTERM)
        else:
            posix.kill(child, _signal.SIGTERM)
    except OSError:
        pass
    returncode = wait_status(child, STOP_GRACE_SECONDS)
    if returncode is None:
        try:
            posix.kill(child, _signal.SIGKILL)
        except OSError:
            pass
        returncode = wait_status(child, 60.0)
    posix._exit(exit_status(returncode if returncode is not None else -_signal.SIGKILL))


def run(words):
    child, keep = int(words[0]), int(words[1])
    interval, due = float(words[2]), float(words[3])
    path, request, state, command = words[4], words[5], words[6], words[7:]
    _signal.pthread_sigmask(_signal.SIG_BLOCK, WATCHED)
    every = min(HOST_CHECK_SECONDS, interval / 10)
    check = time.monotonic() + every
    while True:
        try:
            pid, status = posix.waitpid(child, posix.WNOHANG)
        except ChildProcessError:
            pid, status = child, 255 << 8
        if pid == child:
            returncode = posix.waitstatus_to_exitcode(status)
            back(command, keep, "reaped %d" % returncode, state)
            posix._exit(exit_status(returncode))
        now = time.monotonic()
        if now >= check or now >= due:
            check = now + every
            if keep >= 0 and gone(keep):
                posix.close(keep)
                keep = -1
            if keep < 0:
                keep = register(path, request)
            if keep < 0 and now >= due:
                back(command, keep, "refresh", state)  # the full wrapper refreshes and comes back
                keep = -1
                say("the presence refresh is not served until the full wrapper is reachable again")
            while due <= now:
                due += interval   # served: by the host (held or just re-registered) or the wrapper
        info = _signal.sigtimedwait(WATCHED, max(0.0, min(due, check) - time.monotonic()))
        if info is not None and info.si_signo in STOPS:
            back(command, keep, "stopping %d %r" % (info.si_signo, time.monotonic()), state)
            keep = -1
            stop_alone(child, info.si_signo)


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])
