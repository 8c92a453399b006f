"""Short client processes spawned from a small helper that holds no descriptor table.

Every process a big one spawns starts as a copy of its descriptor table, which the child then
closes before ``exec`` (CPython: ``vfork`` and ``close_range``). The DING service holds ~8
descriptors per seat (5026 at 627 seats), so each tmux client it spawned cost its table's copy:
measured on the loaded 2-core machine, a capture client took 11 ms from a process holding 5000
descriptors against 3.9 ms from a small one. So the service forks this helper once, at its
start (one thread, a handful of descriptors), and every tmux client of its seats is spawned by
the helper instead.

The protocol, over one ``SOCK_SEQPACKET`` socketpair (one datagram per request, so threads
never interleave): a request is ``{"argv": [...], "timeout": seconds}`` with ONE descriptor, the
caller's end of a fresh reply socketpair. The helper runs the command in a thread of its own
(stdin ``/dev/null``, stdout and stderr captured, killed at the timeout) and writes the reply
``{"returncode": n | null, "stdout": bytes, "stderr": bytes}`` (lengths in a JSON header line,
then the bytes) on the reply socket and closes it; ``null`` is a timeout or a spawn that failed.
The helper ends when the service's end of the socketpair closes (the service's death included).

:func:`run` answers like :func:`subprocess.run` with ``capture_output=True, text=True``, ``None``
when the command did not complete (timed out, could not start, the helper died mid-request:
"not proven" to every caller). With no helper (never started in this process, or gone) it spawns
the client itself.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading

REQUEST_BYTES = 1 << 16
_REPLY_MARGIN_SECONDS = 1.0

_helper: list = []   # [control socket, helper pid] while a helper serves this process


def start() -> int | None:
    """Fork the helper (call it while this process is single-threaded); its pid, or None when
    it could not be forked (every client is then spawned here, as before)."""
    if _helper:
        return _helper[1]
    try:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:  # the helper: nothing of the service's but its stderr
        try:
            ours.close()
            keep = theirs.fileno()
            os.closerange(3, keep)
            os.closerange(keep + 1, 1 << 20)
            signal.set_wakeup_fd(-1)
            for number in (signal.SIGTERM, signal.SIGINT):
                signal.signal(number, signal.SIG_DFL)
            _serve(theirs)
        finally:
            os._exit(0)
    theirs.close()
    _helper[:] = [ours, pid]
    return pid


def _serve(control: socket.socket) -> None:
    while True:
        try:
            data, descriptors, _, _ = socket.recv_fds(control, REQUEST_BYTES, 1)
        except InterruptedError:
            continue
        if not data:
            return  # the service is gone
        if len(descriptors) != 1:
            for descriptor in descriptors:
                os.close(descriptor)
            continue
        threading.Thread(target=_answer, args=(data, descriptors[0]), daemon=True).start()


def _answer(data: bytes, descriptor: int) -> None:
    reply = socket.socket(fileno=descriptor)
    try:
        returncode, stdout, stderr = None, b"", b""
        try:
            request = json.loads(data)
            result = subprocess.run(request["argv"], capture_output=True, stdin=subprocess.DEVNULL,
                                    timeout=float(request["timeout"]))
            returncode, stdout, stderr = result.returncode, result.stdout, result.stderr
        except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
            pass
        header = json.dumps({"returncode": returncode, "stdout": len(stdout), "stderr": len(stderr)})
        reply.sendall(header.encode() + b"\n" + stdout + stderr)
    except OSError:
        pass
    finally:
        reply.close()


def run(argv: list[str], timeout: float) -> subprocess.CompletedProcess | None:
    """Run ``argv`` to completion within ``timeout`` seconds; its result (text, newlines as
    :func:`subprocess.run` gives them), or None."""
    helper = tuple(_helper)
    if helper:
        answered, result = _through_helper(helper, argv, timeout)
        if answered:
            return result
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _through_helper(helper: tuple, argv: list[str],
                    timeout: float) -> tuple[bool, subprocess.CompletedProcess | None]:
    """``(False, None)`` when the helper is gone (the caller spawns the client itself, and so
    does every later call); otherwise ``(True, result or None)``."""
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
    """The helper is gone: stop using it (its socket stays open, so no other thread's send can
    reach a descriptor number reused meanwhile) and reap it."""
    if _helper and _helper[1] == pid:
        _helper.clear()
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
