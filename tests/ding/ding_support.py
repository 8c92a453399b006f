"""Helpers for DING's process tests: a private tmux server per test running the stand-in TUI,
a seat in a temp catalog, mail written the way a peer writes it, and the real ``st2 ding``."""

from __future__ import annotations

import ast
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from support import kill_tmux_server, poll_for  # noqa: F401 (poll_for re-exported: the one polling helper)
from st2.bus.envelope import render
from st2.bus.filename import new_filename

HERE = Path(__file__).resolve().parent
STANDIN = HERE / "standin_tui.py"
REPO = HERE.parent.parent
HOST = "h"


class Pane:
    """One tmux server on a private short socket (the 104-byte sun_path bound), session ``st2``."""

    def __init__(self, command: list[str], width: int = 320, height: int = 40, socket: str | None = None) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="st2d-", dir="/tmp"))
        self.socket = socket or str(self.directory / "s")
        environment = dict(os.environ)
        environment.pop("TMUX", None)
        subprocess.run(["tmux", "-S", self.socket, "-f", "/dev/null", "new-session", "-d", "-s", "st2",
                        "-x", str(width), "-y", str(height), *command],
                       check=True, env=environment, timeout=10)

    def tmux(self, *arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-S", self.socket, "-f", "/dev/null", *arguments],
                              capture_output=True, text=True, timeout=10)

    def capture(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "st2").stdout

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "st2", "-l", text)

    def kill(self) -> None:
        """End the tmux server and wait for its process to exit (:func:`support.kill_tmux_server`)."""
        kill_tmux_server(self.socket)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.directory, ignore_errors=True)


class Standin:
    """The stand-in TUI in its own pane, with its byte log, event log and mode control file."""

    def __init__(self, directory: Path, placeholder: str | None = None, socket: str | None = None,
                 render_delay: float = 0.0) -> None:
        self.bytes = directory / "standin.bytes"
        self.events_path = directory / "standin.events"
        self.control = directory / "standin.mode"
        self.control.write_text("idle")
        command = [sys.executable, str(STANDIN), "--bytes", str(self.bytes), "--events",
                   str(self.events_path), "--control", str(self.control)]
        if placeholder is not None:
            command += ["--placeholder", placeholder]
        if render_delay:
            command += ["--render-delay", str(render_delay)]
        self.pane = Pane(command, socket=socket)
        poll_for(lambda: self.events_path.exists() and "ready" in self.events_path.read_text(),
                 what="the stand-in TUI to start")

    @property
    def socket(self) -> str:
        return self.pane.socket

    def events(self, kind: str | None = None) -> list[tuple[str, str]]:
        rows = []
        for line in self.events_path.read_text().splitlines():
            name, _, text = line.partition("\t")
            rows.append((name, ast.literal_eval(text) if text else ""))
        return [row for row in rows if kind is None or row[0] == kind]

    def received(self) -> bytes:
        return self.bytes.read_bytes() if self.bytes.exists() else b""

    def set_mode(self, mode: str) -> None:
        temporary = self.control.with_suffix(".tmp")
        temporary.write_text(mode)
        os.replace(temporary, self.control)

    def close(self) -> None:
        self.pane.close()


def typed_notice(filename: str, subject: str | None, sender: str | None) -> str:
    """The notice exactly as DING types it into a plain seat (the line grammar): the notice
    rendered as an inert shell comment."""
    from st2.ding.notice import notice_text, shell_comment

    return shell_comment(notice_text(filename, subject, sender))


def typed_backlog_notice() -> str:
    from st2.ding.notice import BACKLOG_NOTICE, shell_comment

    return shell_comment(BACKLOG_NOTICE)


def make_seat(catalog: Path, identity: str, declaration: str | None = None) -> Path:
    seat = catalog / "agents" / HOST / identity
    (seat / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (seat / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    (seat / "agent.kdl").write_text(declaration or f'agent "{identity}" {{\n    argv "sh"\n    ding\n}}\n')
    return seat


_last_stamp = [0]


def write_message(seat: Path, subject: str | None, sender: str | None = "h.planner",
                  body: str = "hello", raw_front_matter: bytes | None = None) -> str:
    """Publish one message the way a peer does (temp file, then rename into the inbox). Stamps
    are strictly increasing, so filename order is send order."""
    stamp = max(int(time.time() * 1000), _last_stamp[0] + 1)
    _last_stamp[0] = stamp
    name = new_filename(stamp)
    data = raw_front_matter if raw_front_matter is not None else render(sender, subject, None, (), None, body)
    temporary = seat / "resources" / f".{name}.tmp"
    temporary.write_bytes(data)
    os.replace(temporary, seat / "resources" / "inbox" / name)
    return name


def archive(seat: Path, name: str) -> None:
    from st2.bus.mailbox import archive_message

    archive_message(seat, name)


def progress(log: Path) -> dict[str, int]:
    """A DING notifier's own counters from the last progress line of its ``log`` (it runs with
    --trace-progress): loop ``passes``, delivery ``attempts`` and inbox ``wakeups``; all zero
    before its first pass."""
    text = log.read_text(errors="replace") if log.exists() else ""
    marker = "st2 ding: progress "
    line = text[text.rfind(marker):].partition("\n")[0] if marker in text else ""
    counters = dict(field.split("=", 1) for field in line.split()[3:] if "=" in field)
    return {name: int(counters.get(name, 0)) for name in ("passes", "attempts", "wakeups")}


def runs_on(log: Path, passes: int = 3, attempts: int = 0, what: str = "the notifier to carry on") -> None:
    """Wait until the notifier logging to ``log`` has made ``passes`` more loop passes and
    ``attempts`` more delivery attempts than now: a "nothing more happened" window ends on the
    notifier's own progress, never on a fixed sleep."""
    start = progress(log)

    def advanced() -> bool:
        now = progress(log)
        return now["passes"] >= start["passes"] + passes and now["attempts"] >= start["attempts"] + attempts

    poll_for(advanced, f"{what} ({passes} passes, {attempts} attempts past {start})", timeout=30)


class Notifier:
    """``st2 ding h.<identity>`` as a subprocess in its own process group, tracing its progress."""

    def __init__(self, catalog: Path, identity: str, socket: str, state: Path, *extra: str,
                 retry_backoff: float = 0.3, poll_interval: float = 0.2) -> None:
        self.log = state / f"ding-{identity}.log"
        self.ownership = ownership_record(state, catalog, identity)
        state.mkdir(parents=True, exist_ok=True)
        environment = dict(os.environ, XDG_STATE_HOME=str(state), CATALOG=str(catalog))
        environment.pop("ST_AGENT", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "st2", "ding", f"{HOST}.{identity}", "--host", HOST, "--socket", socket,
             "--retry-backoff", str(retry_backoff), "--poll-interval", str(poll_interval), "--trace-progress",
             *extra],
            env=environment, stdout=subprocess.DEVNULL, stderr=open(self.log, "ab"),
            start_new_session=True, cwd=REPO,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def progress(self) -> dict[str, int]:
        return progress(self.log)

    def wait_started(self, timeout: float = 30) -> None:
        """Wait until the notifier has taken its startup backlog (its ownership record exists)."""
        poll_for(self.ownership.exists, f"the notifier to take its backlog ({self.ownership})", timeout=timeout)

    def runs_on(self, passes: int = 3, attempts: int = 0, what: str = "the notifier to carry on") -> None:
        runs_on(self.log, passes, attempts, what)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> int:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        return self.process.wait(timeout=10)


def ownership_record(state: Path, catalog: Path, identity: str) -> Path:
    from st2.runtime.scope import RuntimeScope

    return RuntimeScope(Path(os.path.abspath(catalog)), HOST, state / "st2").directory / "ding" / f"{HOST}.{identity}.json"


def return_gates(log: Path) -> list[int | None]:
    """Each delivery's gate from the notifier's log, in order: how many ms after the paste its
    first Return went (``(Return N ms after the paste)``), or None for a notice the harness took
    with no Return (``(accepted with no Return)``)."""
    gates: list[int | None] = []
    for line in log.read_text().splitlines():
        if "delivered" not in line:
            continue
        if "(Return " in line:
            gates.append(int(line.rsplit("(Return ", 1)[1].split(" ms", 1)[0]))
        elif "(accepted with no Return)" in line:
            gates.append(None)
    return gates
