"""Short client processes spawned from small helpers that hold no descriptor table.

Every process a big one spawns starts as a copy of its descriptor table, which the child then
closes before ``exec`` (CPython: ``vfork`` and ``close_range``), so a spawn costs more the more
descriptors its spawner holds; the DING service holds several per seat. So the service forks
:data:`HELPERS` helper(s) at its start (a handful of descriptors each), and every tmux client of
its seats is spawned by one of them, in turn.

Each helper, and each client it spawns, runs in a session of its own, because Linux's autogroup
scheduler (``/proc/sys/kernel/sched_autogroup_enabled``) shares the CPU between sessions, not
processes: the service is one session for every seat, where each self-serving notifier is a
session per seat. (What each of the two costs a delivery: docs/memory.md §The DING service.)

The protocol, over one ``SOCK_SEQPACKET`` socketpair per helper (one datagram per request, so
threads never interleave): a request is ``{"argv": [...], "timeout": seconds}`` with ONE
descriptor, the caller's end of a fresh reply socketpair. The helper runs the command in a
thread of its own (stdin ``/dev/null``, stdout and stderr captured, killed at the timeout) and
writes the reply ``{"returncode": n | null, "stdout": bytes, "stderr": bytes}`` (lengths in a
JSON header line, then the bytes) on the reply socket and closes it; ``null`` is a timeout or a
spawn that failed. A helper ends when the service's end of its socketpair closes (the service's
death included), so it outlives no service.

:func:`run` answers like :func:`subprocess.run` with ``capture_output=True, text=True``, ``None``
when the command did not complete (timed out, could not start, the helper died mid-request:
"not proven" to every caller). With no helper (never started in this process, or all gone) it
spawns the client itself.

:func:`attach` starts a long-lived client the same way (a request with ``"attach": true`` and a
SECOND descriptor, the stream socket that becomes the client's stdin and stdout): the helper
answers ``{"pid": n | null}`` and reaps the client when it ends. Only a helper starts one;
:func:`end` asks it to terminate one it started (``{"end": pid}``), and when its service is gone
(SIGKILL included) the helper terminates every client it attached before it ends: a
control-mode tmux client whose peer died while the server was writing to it is never let go by
tmux 3.3a (its unwritable output keeps the client "not done"), so the client's
own process must end for the server to drop it.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import threading

REQUEST_BYTES = 1 << 16
_REPLY_MARGIN_SECONDS = 1.0

HELPERS = 1   # 20 threads x 6 clients from a 5000-descriptor process: 232-321 ms through one, 311-341 through 4

_helpers: list = []     # (control socket, pid) of each helper still serving this process
_attached: set = set()  # in a helper: the long-lived clients it started and has not reaped
_turn = itertools.count()


def start(count: int = HELPERS) -> list[int]:
    """Fork ``count`` helpers (call it while this process is single-threaded); their pids. With
    none forked (an error), :func:`run` spawns every client itself."""
    while len(_helpers) < count:
        try:
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            pid = os.fork()
        except OSError:
            break
        if pid == 0:  # a helper: nothing of the service's but its stderr, in a session of its own
            try:
                ours.close()
                keep = theirs.fileno()
                os.closerange(3, keep)
                os.closerange(keep + 1, 1 << 20)
                signal.set_wakeup_fd(-1)
                for number in (signal.SIGTERM, signal.SIGINT):
                    signal.signal(number, signal.SIG_DFL)
                os.setsid()
                _serve(theirs)
            finally:
                os._exit(0)
        theirs.close()
        _helpers.append((ours, pid))
    return [pid for _, pid in _helpers]


def _serve(control: socket.socket) -> None:
    while True:
        try:
            data, descriptors, _, _ = socket.recv_fds(control, REQUEST_BYTES, 2)
        except InterruptedError:
            continue
        if not data:
            for process in list(_attached):   # the service is gone: so are the clients it kept
                process.terminate()
            return
        if len(descriptors) == 1:
            threading.Thread(target=_answer, args=(data, descriptors[0]), daemon=True).start()
        elif len(descriptors) == 2:
            threading.Thread(target=_attach_answer, args=(data, *descriptors), daemon=True).start()
        else:
            for descriptor in descriptors:
                os.close(descriptor)


def _answer(data: bytes, descriptor: int) -> None:
    reply = socket.socket(fileno=descriptor)
    try:
        try:
            request = json.loads(data)
            if isinstance(request, dict) and "end" in request:
                return _end_answer(request, reply)
        except ValueError:
            pass
        returncode, stdout, stderr = None, b"", b""
        try:
            request = json.loads(data)
            result = subprocess.run(request["argv"], capture_output=True, stdin=subprocess.DEVNULL,
                                    timeout=float(request["timeout"]), start_new_session=True)
            returncode, stdout, stderr = result.returncode, result.stdout, result.stderr
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
            pass
        header = json.dumps({"returncode": returncode, "stdout": len(stdout), "stderr": len(stderr)})
        reply.sendall(header.encode() + b"\n" + stdout + stderr)
    except OSError:
        pass
    finally:
        reply.close()


def _end_answer(request: dict, reply: socket.socket) -> None:
    """Terminate the attached client ``request["end"]`` names, if this helper started it and has
    not reaped it (a child's pid cannot be reused before it is reaped)."""
    for process in list(_attached):
        if process.pid == request.get("end") and process.poll() is None:
            process.terminate()
    reply.sendall(b"{}\n")


def _attach_answer(data: bytes, descriptor: int, stream: int) -> None:
    reply = socket.socket(fileno=descriptor)
    process = None
    try:
        try:
            request = json.loads(data)
            if request.get("attach") is True:
                process = _start_attached(request["argv"], stream)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        finally:
            os.close(stream)
        reply.sendall(json.dumps({"pid": process.pid if process else None}).encode() + b"\n")
    except OSError:
        pass
    finally:
        reply.close()
    if process is not None:
        process.wait()
        _attached.discard(process)


def _start_attached(argv: list[str], stream: int) -> subprocess.Popen:
    process = subprocess.Popen(argv, stdin=stream, stdout=stream, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    _attached.add(process)
    return process


def attach(argv: list[str], stream: socket.socket, timeout: float) -> int | None:
    """Start ``argv`` with ``stream`` as its stdin and stdout, spawned by a helper; its pid, or
    None when no helper serves or it could not start. The caller keeps ``stream``."""
    for control, pid in list(_helpers):
        ours, theirs = socket.socketpair()
        try:
            try:
                socket.send_fds(control, [json.dumps({"argv": argv, "attach": True}).encode()],
                                [theirs.fileno(), stream.fileno()])
            except OSError:
                _forget(pid)
                continue
            theirs.close()
            ours.settimeout(timeout + _REPLY_MARGIN_SECONDS)
            chunks = []
            try:
                while (chunk := ours.recv(256)) and not chunk.endswith(b"\n"):
                    chunks.append(chunk)
                answer = json.loads(b"".join(chunks) + chunk).get("pid")
            except (OSError, ValueError, AttributeError):
                return None
            return answer if isinstance(answer, int) and not isinstance(answer, bool) else None
        finally:
            theirs.close()
            ours.close()
    return None


def end(pid: int, timeout: float = 2.0) -> None:
    """Ask the helpers to terminate the attached client ``pid`` if it still runs (a closed
    control client the server did not let go of)."""
    for control, helper in list(_helpers):
        ours, theirs = socket.socketpair()
        try:
            try:
                socket.send_fds(control, [json.dumps({"end": pid}).encode()], [theirs.fileno()])
            except OSError:
                _forget(helper)
                continue
            theirs.close()
            ours.settimeout(timeout)
            try:
                ours.recv(64)
            except OSError:
                pass
        finally:
            theirs.close()
            ours.close()


def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    """Run ``argv`` to completion within ``timeout`` seconds; its result (text, newlines as
    :func:`subprocess.run` gives them), or None."""
    helpers = list(_helpers)
    while helpers:
        helper = helpers.pop(next(_turn) % len(helpers))
        answered, result = _through_helper(helper, argv, timeout)
        if answered:
            return result
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _through_helper(helper: tuple, argv: list[str],
                    timeout: float) -> tuple[bool, subprocess.CompletedProcess | None]:
    """``(False, None)`` when the helper is gone (the caller tries the next helper, and with none
    left spawns the client itself, as every later call does); otherwise ``(True, result or None)``."""
    control, pid = helper
    ours, theirs = socket.socketpair()
    try:
        try:
            socket.send_fds(control, [json.dumps({"argv": argv, "timeout": timeout}).encode()], [theirs.fileno()])
        except OSError:
            _forget(pid)
            return False, None
        theirs.close()
        ours.settimeout(timeout + _REPLY_MARGIN_SECONDS)
        chunks = []
        try:
            while chunk := ours.recv(1 << 16):
                chunks.append(chunk)
        except OSError:
            return True, None
    finally:
        theirs.close()
        ours.close()
    header, newline, body = b"".join(chunks).partition(b"\n")
    try:
        fields = json.loads(header) if newline else None
        returncode, out, err = fields["returncode"], fields["stdout"], fields["stderr"]
    except (ValueError, KeyError, TypeError):
        return True, None
    if returncode is None or len(body) != out + err:
        return True, None
    return True, subprocess.CompletedProcess(argv, returncode, _text(body[:out]), _text(body[out:]))


def _text(data: bytes) -> str:
    return data.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _forget(pid: int) -> None:
    """A helper is gone: stop using it (its socket stays open, so no other thread's send can
    reach a descriptor number reused meanwhile) and reap it."""
    for helper in list(_helpers):
        if helper[1] == pid:
            try:
                _helpers.remove(helper)
            except ValueError:
                pass   # another thread forgot it first
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
