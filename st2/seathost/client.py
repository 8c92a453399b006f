"""The supervisor's side of the seat host: keep one running for the scope, and fork through it.

:meth:`SeatHostClient.fork` is what the exec backend calls for a forkable task (a DING
task). It makes sure a host of this very build answers (``hello``); a host of another build
(a replaced binary) is asked to ``retire`` and a new one is started, so a fork never runs old
code; a host that is gone (SIGKILLed, crashed) is started again. The host is started like every
task: its own session (and scope, where systemd is reachable), never the supervisor's group.
When no host can be had, ``fork`` returns None and the caller spawns the task directly,
after saying so once (a host that does not come up is retried after
:data:`RETRY_SECONDS`, never on every launch).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Callable

from st2.fs.log import open_log
from st2.seathost import wire

START_TIMEOUT_SECONDS = 20.0
SUN_PATH_LINUX = 108
RETRY_SECONDS = 30.0
POLL_SECONDS = 0.02


class SeatHostClient:
    def __init__(self, scope_directory: Path, log: Path, command: list[str], environment: dict[str, str],
                 prefix: list[str] | None = None, say: Callable[[str], None] | None = None) -> None:
        self.directory = Path(scope_directory)
        self.path = wire.socket_path(self.directory)
        self.log = Path(log)
        self.command = list(command)
        self.environment = dict(environment)
        self.prefix = list(prefix or [])
        self.say = say or (lambda line: None)
        self.build = wire.build_id()
        self.failed_at: float | None = None
        self.started: subprocess.Popen | None = None
        # A socket path past the kernel's sun_path bound could never be bound: say it once.
        self.unbindable = len(os.fsencode(str(self.path))) + 1 > SUN_PATH_LINUX
        if self.unbindable:
            self.say(f"the seat host socket path {self.path} exceeds the {SUN_PATH_LINUX}-byte sun_path bound; "
                     "launching per-seat processes directly, each with its own interpreter and inotify instance")

    def hello(self) -> dict | None:
        try:
            answer = wire.request(self.path, {"op": "hello"}, timeout=2.0)
        except OSError:
            return None
        return answer if answer.get("protocol") == wire.PROTOCOL else None

    def ensure(self) -> bool:
        """True when a host of this build answers (starting one if needed)."""
        if self.unbindable:
            return False
        answer = self.hello()
        if answer is not None and answer.get("build") == self.build:
            return True
        if self.failed_at is not None and time.monotonic() - self.failed_at < RETRY_SECONDS:
            return False
        if answer is not None:
            self.say(f"seat host pid {answer.get('pid')} runs another build; retiring it")
            try:
                wire.request(self.path, {"op": "retire"}, timeout=2.0)
            except OSError:
                pass
        if self._start():
            self.failed_at = None
            return True
        self.failed_at = time.monotonic()
        self.say(f"no seat host answers on {self.path} (see {self.log}); launching per-seat processes "
                 f"directly, each with its own interpreter and inotify instance")
        return False

    def _start(self) -> bool:
        try:
            descriptor = open_log(self.log)
        except OSError as error:
            self.say(f"cannot open the seat host's log {self.log}: {error.strerror or error}")
            return False
        try:
            self.started = subprocess.Popen(
                [*self.prefix, *self.command, "seat-host", "--scope-directory", str(self.directory)],
                stdin=subprocess.DEVNULL, stdout=descriptor, stderr=subprocess.STDOUT, env=self.environment,
                start_new_session=True, close_fds=True, cwd="/",
            )
        except OSError as error:
            self.say(f"cannot start the seat host: {error}")
            return False
        finally:
            os.close(descriptor)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            answer = self.hello()
            if answer is not None and answer.get("build") == self.build:
                self.say(f"seat host started as pid {answer.get('pid')}")
                return True
            if self.started.poll() is not None and answer is None:
                return False   # it ended without serving (its log says why)
            time.sleep(POLL_SECONDS)
        return False

    def fork(self, words: list[str], environment: dict[str, str], directory: str, log: int) -> tuple[int, int] | None:
        """Fork ``st2 <words>`` through the host: ``(pid, start ticks)``, or None when no host
        of this build serves (the caller then spawns the task itself)."""
        for attempt in range(2):
            if not self.ensure():
                return None
            try:
                answer = wire.request(self.path, {"op": "fork", "argv": list(words), "env": environment,
                                                  "cwd": directory, "build": self.build}, (log,))
            except OSError as error:
                self.say(f"seat host fork request failed: {error}")
                continue
            if isinstance(answer.get("pid"), int) and isinstance(answer.get("startTicks"), int):
                return answer["pid"], answer["startTicks"]
            self.say(f"seat host refused a fork: {answer.get('error')}")
            if answer.get("error") != "build":
                return None
        return None
