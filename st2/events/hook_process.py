"""One run of an operator hook's command, held as a process group st2 ends (:mod:`st2.events.notify`).

:meth:`HookProcess.start` runs ``argv`` under a wrapping ``sh``, in a new session (so a new
process group, led by the wrapper), with the event's line on its stdin. The wrapper

* runs the hook with stdout to ``/dev/null`` and reports the hook's exit status as one line on
  its own stdout, one end of a socket pair whose other end st2 holds (the supervisor reaps every
  child it has, ``waitpid(-1)``, so the wrapper's own exit status could be taken before st2 asks
  for it; the line cannot);
* then waits, so its PID — the group's ID — stays in use until st2 kills the group: the
  ``killpg`` that follows the hook's end (or its timeout, or ``st2 down``'s stop of the
  supervisor) can reach no other process, and any background child the hook left in its group
  dies with it;
* keeps a watchdog in the group reading its end of the socket pair: st2's end closes when st2
  ends the run or when st2 itself dies (even by SIGKILL), and the watchdog then kills the whole
  group, so no hook outlives the supervisor that ran it. (A hook that leaves its group —
  ``setsid``, a daemon's double fork — leaves st2's reach, as it would any supervisor's
  without cgroups.)

The hook's stderr is read through a pipe as it comes, while st2 waits, and only its last
:data:`CAPTURE_BYTES` are kept: the rest is counted and discarded, so a hook writing without
end costs no memory and no disk, only the reading until its ``timeout``.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import time

CAPTURE_BYTES = 4096  # the tail of a hook's stderr kept for its failure line
READ_BYTES = 64 * 1024
# "$0" "$@" is the hook's argv. The watchdog's stdin is the wrapper's end of the socket pair
# (its stdout, duplicated before stdout goes to /dev/null); the hook never holds that end.
WRAPPER = '( read _ ; kill -9 0 ) <&1 >/dev/null & "$0" "$@" >/dev/null; echo $?; wait'


class HookProcess:
    """A hook's process group from :meth:`start` until :meth:`finish` (or :meth:`kill` from
    another thread)."""

    def __init__(self, argv: tuple[str, ...] | list[str], environment: dict[str, str]) -> None:
        self.argv = list(argv)
        self.environment = environment
        self.child: subprocess.Popen | None = None
        self.stderr_tail = b""
        self.stderr_bytes = 0  # how many bytes the hook wrote to stderr in all
        self._status: socket.socket | None = None
        self._errors: int | None = None

    def start(self, data: bytes) -> None:
        """Start the group and give it ``data`` on stdin; raise OSError when it cannot start."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        errors_read, errors_write = os.pipe()
        try:
            self.child = subprocess.Popen(["sh", "-c", WRAPPER, *self.argv], stdin=subprocess.PIPE,
                                          stdout=theirs.fileno(), stderr=errors_write, env=self.environment,
                                          start_new_session=True)
        except BaseException:
            ours.close()
            os.close(errors_read)
            raise
        finally:
            theirs.close()
            os.close(errors_write)
        self._status, self._errors = ours, errors_read
        os.set_blocking(errors_read, False)
        _feed(self.child, data)

    def wait(self, timeout: float) -> int | None:
        """The hook's exit status, or None when it gave none within ``timeout`` seconds (or its
        wrapper was killed from outside); its stderr is drained meanwhile."""
        deadline = time.monotonic() + timeout
        data = b""
        watched = [self._status.fileno(), self._errors]
        while not data.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select(watched, [], [], remaining)
            if not readable:
                return None
            if self._errors in readable and not self._drain_errors():
                watched.remove(self._errors)
            if self._status.fileno() in readable:
                chunk = self._status.recv(64)
                if not chunk:  # the wrapper and its watchdog died without a word
                    return None
                data += chunk
        text = data.decode("ascii", "replace").strip()
        return int(text) if text.isdigit() else None

    def _drain_errors(self) -> bool:
        """Read what stderr holds now; False at its end."""
        while True:
            try:
                chunk = os.read(self._errors, READ_BYTES)
            except BlockingIOError:
                return True
            if not chunk:
                return False
            self.stderr_bytes += len(chunk)
            self.stderr_tail = (self.stderr_tail + chunk)[-CAPTURE_BYTES:]

    def kill(self) -> None:
        """SIGKILL the whole group. The wrapper leads it and only a kill ends it, so its ID is
        still this group's; safe from any thread, and again."""
        child = self.child
        if child is None or child.returncode is not None:
            return
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def finish(self) -> None:
        """End the group (the hook's background children too), take the rest of its stderr,
        release the descriptors and reap the wrapper."""
        self.kill()
        if self._status is not None:
            self._status.close()  # the watchdog's signal, should the kill have missed anything
            self._status = None
        if self.child is not None:
            try:
                self.child.wait(timeout=5)
            except (subprocess.TimeoutExpired, ChildProcessError):
                pass
        if self._errors is not None:
            self._drain_errors()
            os.close(self._errors)
            self._errors = None


def _feed(child: subprocess.Popen, data: bytes) -> None:
    """Give the hook its stdin without ever blocking on it (an event line fits a pipe's buffer;
    a hook that exits unread is no error)."""
    try:
        os.set_blocking(child.stdin.fileno(), False)
        child.stdin.write(data)
    except (BrokenPipeError, BlockingIOError, OSError):
        pass
    finally:
        try:
            child.stdin.close()
        except OSError:
            pass
