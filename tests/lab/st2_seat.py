"""A seat run by the real ``st2 up`` in the lab: the CLI against its catalog, its records, its
roster row, its private tmux server (the PTY task's socket under the runtime scope) and the
teardown that kills that server and the pane's process group; and the ``fake_model`` fixture (import
it into a test module). Shared by the driver lab tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fake_model import FakeModel
from support import poll_for

REPO = Path(__file__).resolve().parents[2]
WAIT = 90.0


def poll(predicate, what: str, timeout: float = WAIT, describe=lambda: "", step: float = 0.1):
    """:func:`support.poll_for` naming ``what`` and the tail of ``describe()`` (the screen)."""
    return poll_for(predicate, lambda: f"{what}\n{describe()[-4000:]}", timeout=timeout, step=step)


@pytest.fixture
def fake_model():
    """The loopback fake model server, for one test."""
    with FakeModel() as fake:
        yield fake


def session_lost_line(session_id: str) -> str:
    """Doctor's ``session-lost`` advisory for a resume refused ``session_id`` (issue 24)."""
    return (f"harness session {session_id} could not be resumed; the seat started a fresh session "
            "(the lost id is kept in its resumable-session record and never retried)")


def forked_wrappers(processes) -> list:
    """The session wrappers that pane anchors among ``processes`` hold the pane for, with their
    descendants: a native seat's wrapper is the seat host's child (st2.seathost.session_fork), not
    under the tmux server, and a crash takes it too."""
    import psutil

    from st2.drivers.session_handoff import ANCHOR_NAME

    found = []
    for process in processes:
        try:
            words = process.cmdline()
            if len(words) > 4 and words[1] == "-c" and words[3] == ANCHOR_NAME and words[4].isdigit():
                wrapper = psutil.Process(int(words[4]))
                found += [wrapper, *wrapper.children(recursive=True)]
        except psutil.Error:
            pass
    return found


class UpSeat:
    scrollback = 200
    """How many lines of history :meth:`screen` captures above the visible pane (0: the pane only)."""

    def __init__(self, catalog: Path, state_home: Path, env: dict[str, str], host: str, identity: str) -> None:
        self.catalog = catalog
        self.host = host
        self.identity = identity
        self.directory = catalog / "agents" / host / identity
        self.state_home = state_home
        self.env = env
        self.socket: Path | None = None
        self.session = ""

    def st2(self, *words: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "st2", "--catalog", str(self.catalog), *words],
                              capture_output=True, text=True, env=self.env, timeout=timeout, cwd=REPO)

    def record(self, name: str):
        try:
            return json.loads((self.directory / name).read_text())
        except (FileNotFoundError, ValueError):
            return None

    def row(self) -> dict:
        result = self.st2("agents", "--json", "--host", self.host)
        assert result.returncode == 0, result.stderr
        return next(row for row in json.loads(result.stdout) if row["identity"].split(".")[-1] == self.identity)

    def tmux(self, *words: str) -> str:
        result = subprocess.run(["tmux", "-S", str(self.socket), *words], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def screen(self) -> str:
        try:
            history = ["-S", f"-{self.scrollback}"] if self.scrollback else []
            return self.tmux("capture-pane", "-p", *history, "-t", self.session) if self.socket else ""
        except AssertionError:
            return ""

    def type(self, text: str) -> None:
        """Type ``text`` into the pane, wait until it shows in the composer and the screen has
        settled (two captures 0.3 s apart alike, as DING waits before its Return), then press
        Enter. A TUI still taking in the typed burst can swallow an Enter sent the moment the
        text first shows (omp 18.2.3 did once under load: the turn never started)."""
        self.tmux("send-keys", "-t", self.session, "-l", text)
        poll(lambda: text in self.screen(), f"{text!r} in the composer", 30, self.screen, step=0.25)
        last = [self.screen()]

        def settled() -> bool:
            now = self.screen()
            alike, last[0] = now == last[0], now
            return alike and text in now
        poll(settled, f"{text!r} settled in the composer", 30, self.screen, step=0.3)
        self.tmux("send-keys", "-t", self.session, "Enter")

    def wrapper(self) -> int:
        """The PID of the seat's session wrapper: the pane process, or — a native seat's wrapper
        forked from the seat host (st2.seathost.session_fork) — the one its pane anchor names.
        Killing the anchor is not killing the wrapper: that runs the wrapper's stop path."""
        from st2.drivers.session_handoff import ANCHOR_NAME

        pane = int(self.tmux("display-message", "-p", "-t", self.session, "#{pane_pid}").strip())
        words = Path(f"/proc/{pane}/cmdline").read_bytes().split(b"\0")
        if len(words) > 4 and words[3] == ANCHOR_NAME.encode() and words[4].isdigit():
            return int(words[4])
        return pane

    def sessions(self) -> list[str]:
        """The session names the seat's tmux server lists; none while it is not (or no longer) serving."""
        result = subprocess.run(["tmux", "-S", str(self.socket), "list-sessions", "-F", "#{session_name}"],
                                capture_output=True, text=True, timeout=30)
        return result.stdout.split() if result.returncode == 0 else []

    def up(self, session: bool = True) -> None:
        """One ``st2 up --once`` pass; then find the seat's tmux socket and (unless the seat is expected to
        end at once, as a refused harness does) its session."""
        started = self.st2("up", "--once", "--host", self.host)
        assert started.returncode == 0, started.stdout + started.stderr
        self.find(session)

    def find(self, session: bool = True) -> None:
        """Find the seat's tmux socket and (unless ``session`` is False) its session, however it was
        launched (one ``st2 up --once`` pass, or a long-running ``st2 up``)."""
        self.socket = poll(lambda: next(iter(self.state_home.glob(f"**/s/{self.host}.{self.identity}")), None),
                           "the seat's tmux socket", 30)
        if session:
            self.session = poll(self.sessions, "the session", 30)[0]

    def session_record(self):
        """The seat's resumable-session record (issue 24), or None."""
        from st2.runtime.resumable_session import SessionStore

        store = SessionStore.of(self.catalog, self.host, self.state_home / "st2")
        try:
            return json.loads(store.record(f"{self.host}.{self.identity}").read_text())
        except (FileNotFoundError, ValueError):
            return None

    def enriched_session(self) -> str:
        """The seat's ``session`` in ``st2 agents --json --enrich``, as its exact wire text."""
        result = self.st2("agents", "--json", "--enrich", "--host", self.host)
        assert result.returncode == 0, result.stderr
        row = next(row for row in json.loads(result.stdout) if row["identity"] == f"{self.host}.{self.identity}")
        return json.dumps(row["session"], separators=(",", ":"))

    def assert_fell_back(self, fresh: str, dead: str) -> None:
        """The loud fallback (issue 24): the record, the enriched row and Doctor name the lost id."""
        record = self.session_record()
        assert (record["start"], record["sessionId"], [entry["sessionId"] for entry in record["lost"]]) == (
            "fallback", fresh, [dead])
        assert self.enriched_session() == f'{{"start":"fallback","sessionId":"{fresh}","lostSessionIds":["{dead}"]}}'
        assert session_lost_line(dead) in self.st2("doctor", "--host", self.host).stdout

    def assert_resumed_past(self, fresh: str, dead: str) -> None:
        """A later relaunch resumed the fallback's session: the lost id is kept, Doctor is quiet."""
        record = self.session_record()
        assert (record["start"], record["sessionId"], [entry["sessionId"] for entry in record["lost"]]) == (
            "resumed", fresh, [dead])
        assert self.enriched_session() == f'{{"start":"resumed","sessionId":"{fresh}","lostSessionIds":["{dead}"]}}'
        assert "session-lost" not in self.st2("doctor", "--host", self.host).stdout

    def crash(self) -> list[int]:
        """SIGKILL the seat's tmux server and every process under it — the wrapper (a forked
        wrapper its pane's anchor names included), a harness in its own process group (Codex
        app-server, opencode serve), the tools it spawned — each by PID, so no code of theirs
        runs; wait until all are gone and return their PIDs."""
        import psutil

        server = psutil.Process(int(self.tmux("display-message", "-p", "#{pid}").strip()))
        # Stopped first, all of them (again over any child forked meanwhile), so none runs a line
        # after another is gone (a harness would otherwise hear its terminal hang up, or a wrapper
        # its child's death); then killed.
        doomed: dict[int, psutil.Process] = {}
        while True:
            found = {process.pid: process for process in [server, *server.children(recursive=True)]
                     if process.pid not in doomed}
            found |= {process.pid: process for process in forked_wrappers(found.values()) if process.pid not in doomed}
            if not found:
                break
            for pid in found:
                try:
                    os.kill(pid, signal.SIGSTOP)
                except ProcessLookupError:
                    pass
            doomed.update(found)
        for pid in doomed:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

        def gone() -> bool:
            for process in doomed.values():
                try:
                    if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                        return False
                except psutil.NoSuchProcess:
                    pass
            return True

        poll(gone, "the killed tmux server and everything under it to be gone", 30)
        return list(doomed)

    def reboot(self) -> None:
        """A simulated reboot after :meth:`crash`: the runtime scopes (launch records, sockets) are
        removed, as a host restart invalidates them; the catalog and the rest of the state stay."""
        import shutil

        shutil.rmtree(self.state_home / "st2" / "scopes", ignore_errors=True)
        self.socket = None
        self.session = ""

    def reboot_and_up(self) -> list[int]:
        """:meth:`crash`, :meth:`reboot`, then ``st2 up`` again; return the PIDs killed."""
        killed = self.crash()
        self.reboot()
        self.up()
        return killed

    def kill_pty(self) -> None:
        if self.socket is not None and self.socket.exists():
            pane = subprocess.run(["tmux", "-S", str(self.socket), "display-message", "-p", "-t", self.session,
                                   "#{pane_pid}"], capture_output=True, text=True, timeout=30).stdout.strip()
            subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=30)
            if pane.isdigit():
                try:
                    os.killpg(int(pane), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
