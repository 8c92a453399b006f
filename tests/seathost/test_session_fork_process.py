"""A native seat's session wrapper forked from the seat host onto its pane's terminal, while the
pane process is a ``/bin/sh`` anchor (st2.drivers.session_handoff, st2.seathost.session_fork):
against a real ``st2 seat-host``, real tmux panes and the Codex stand-in app-server."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from support import REPO, FaultSeed, poll_for
from st2.drivers.session_handoff import ANCHOR, ANCHOR_NAME
from st2.runtime import launch_record
from st2.runtime.scope import RuntimeScope
from st2.seathost import wire

pytestmark = [pytest.mark.process, pytest.mark.long]

CODEX_TESTS = REPO / "tests" / "drivers" / "codex"
for folder in (CODEX_TESTS, REPO / "tests" / "drivers" / "opencode"):
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

from codex_support import make_seat, write_message  # noqa: E402

STANDIN = CODEX_TESTS / "standin_app_server.py"
HELP_LINE = "/help shows this"


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:  # gone, or gone under the read (ESRCH)
        return []


def is_anchor(pid: int) -> bool:
    """Whether ``pid`` runs the pane anchor now with its relay traps set: one read of its command
    line (the pane process execs into the anchor keeping its PID, and two reads can straddle the
    exec, the second finding the line empty), then its caught signals. A signal the test sends
    before the anchor's shell has run its ``trap`` lines kills the anchor instead of being
    relayed (the documented window between ``execve`` and the traps), and under load the wrapper,
    forked in parallel, can be serving before the shell gets there: a fresh-clone run SIGTERMed
    such an anchor and waited 30 s for an exit status a signal death never gives."""
    words = cmdline(pid)
    return len(words) > 4 and words[3] == ANCHOR_NAME and trapping(pid) and in_read(pid)


def in_read(pid: int) -> bool:
    """Whether ``pid`` is blocked in read(2), the anchor's wait for its next request. A trapped
    signal that reaches dash after its last look for pending traps and before it enters the
    read is not acted on until the read returns (docs: :mod:`st2.drivers.pane_anchor`), so a
    test signals an anchor only once it is in the read: a fresh-clone run SIGTERMed the opencode
    TUI anchor the moment it had answered ``attach``, and the anchor sat in its read for 30 s."""
    try:
        return Path(f"/proc/{pid}/syscall").read_text().split()[0] == read_syscall()
    except (OSError, IndexError):
        return False


@functools.cache
def read_syscall() -> str:
    """The number /proc shows for a shell blocked in its ``read`` builtin on this machine."""
    reader, writer = os.pipe()
    shell = subprocess.Popen(["/bin/sh", "-c", "read line"], stdin=reader)
    os.close(reader)
    try:
        def blocked() -> str | None:
            words = Path(f"/proc/{shell.pid}/syscall").read_text().split()
            return words[0] if status_field(shell.pid, "State") == "S" and len(words) > 1 else None
        return poll_for(blocked, "a reference shell blocked in read", timeout=10)
    finally:
        os.close(writer)
        shell.wait(timeout=10)


def trapping(pid: int) -> bool:
    """Whether ``pid`` catches SIGTERM and SIGHUP (the exec reset the pane process's own
    handlers, so after it only the anchor's traps set these)."""
    caught = status_field(pid, "SigCgt")
    return caught is not None and all(int(caught, 16) & (1 << (number - 1))
                                      for number in (signal.SIGTERM, signal.SIGHUP))


def status_field(pid: int, name: str) -> str | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(name + ":"):
                return line.split()[1]
    except OSError:  # gone, or gone under the read (ESRCH)
        return None
    return None


def alive(pid: int) -> bool:
    state = status_field(pid, "State")
    return state is not None and state != "Z"


def process_states(**pids: int) -> str:
    """One line per named process: its state, what it waits in, its pending and caught signals
    (for a timeout's message: which of them stopped moving, and where)."""
    lines = []
    for name, pid in pids.items():
        try:
            wchan = Path(f"/proc/{pid}/wchan").read_text()
        except OSError:
            wchan = "-"
        lines.append(f"{name} {pid}: state {status_field(pid, 'State')}, in {wchan}, pending "
                     f"{status_field(pid, 'ShdPnd')}/{status_field(pid, 'SigPnd')}, blocked "
                     f"{status_field(pid, 'SigBlk')}, caught {status_field(pid, 'SigCgt')}")
        try:   # each thread's system call (its number and arguments, or "running")
            for task in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda path: int(path.name)):
                lines.append(f"  thread {task.name}: {(task / 'syscall').read_text().strip()}")
        except OSError:
            pass
    return "\n".join(lines)


def zombie_status(pid: int) -> int | None:
    """The exit status the kernel holds for ``pid`` while it is a zombie nobody has reaped (the
    wait status in field 52 of ``/proc/<pid>/stat``); None when it is not a zombie, is gone, or
    was killed by a signal."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # gone, or gone under the read (ESRCH)
        return None
    if fields[0] != "Z":
        return None
    wait_status = int(fields[49])   # field 52 counted from 1, the first two before ")"
    return os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else None


def session_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])


def children(pid: int) -> list[int]:
    try:
        return [int(word) for word in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:  # gone, or gone under the read (ESRCH)
        return []


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def history(standin: Path) -> list[str]:
    path = standin / "history.jsonl"
    return [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


class Rig:
    """A catalog with one Codex seat (``h.coder``), a private state home and tmux socket."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.catalog = base / "c"
        (self.catalog / "agents").mkdir(parents=True)
        self.seat = make_seat(self.catalog)
        self.standin = base / "standin"
        self.standin.mkdir()
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith(("ST_", "CATALOG", "TMUX", "NOTIFY_SOCKET"))}
        self.env.update(XDG_STATE_HOME=str(base / "state"), STANDIN_DIR=str(self.standin), ST2_TRANSPORT="setsid")
        self.scope = RuntimeScope(self.catalog, "h", state_dir=base / "state" / "st2")
        self.socket = base / "tmux"
        self.host: subprocess.Popen | None = None

    def start_host(self) -> int:
        self.scope.directory.mkdir(parents=True, exist_ok=True)
        with open(self.base / "host.log", "ab") as log:
            self.host = subprocess.Popen([sys.executable, "-m", "st2", "seat-host", "--scope-directory",
                                          str(self.scope.directory)], stdout=log, stderr=subprocess.STDOUT,
                                         cwd=REPO, env=self.env, start_new_session=True)
        poll_for(lambda: self.hello().get("pid") == self.host.pid, "the seat host to answer", timeout=30)
        return self.host.pid

    def hello(self) -> dict:
        try:
            return wire.request(wire.socket_path(self.scope.directory), {"op": "hello"}, timeout=1.0)
        except OSError:
            return {}

    def tmux(self, *words: str, check: bool = True) -> str:
        result = subprocess.run(["tmux", "-S", str(self.socket), "-f", "/dev/null", *words], capture_output=True,
                                text=True, timeout=30, env=self.env)
        assert result.returncode == 0 or not check, result.stderr
        return result.stdout

    def open_pane(self, command: list[str] | None = None) -> int:
        """The wrapper as the pane's command, exactly as the supervisor lowers a codex seat (or
        ``command``); the pane stays (remain-on-exit) so its exit status can be read."""
        command = command or [sys.executable, "-m", "st2", "--catalog", str(self.catalog), "driver",
                              "codex-session", "--identity", "h.coder", "--runtime-id", "h.coder", "--",
                              str(STANDIN), "app-server"]
        self.tmux("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                  "new-session", "-d", "-s", "seat", "-x", "160", "-y", "50", "-c", str(REPO),
                  "-e", f"XDG_STATE_HOME={self.env['XDG_STATE_HOME']}", "-e", f"STANDIN_DIR={self.standin}",
                  *["/bin/sh", "-c", 'exec "$0" "$@"', *command])
        return int(self.tmux("display-message", "-p", "-t", "seat", "#{pane_pid}").strip())

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "seat", check=False)

    def dead_status(self, pane: int) -> int | None:
        """The exit status of the pane's process ``pane`` once it has exited (None before, or
        after a death by signal): tmux's ``#{pane_dead_status}``, or, while ``pane`` is a zombie
        tmux has not reaped, the status the kernel holds for it (:func:`zombie_status`).

        tmux 3.3a built with libutempter (Debian 12's) removes a pane's utmp record when the
        pane's terminal reaches its end, through a helper it waits for with SIGCHLD reset to its
        default: a pane process that exits meanwhile is never reaped, and its pane reads dead
        (its terminal closed) with no status. The anchor closes the terminal as it exits (its
        last holder once the wrapper has gone), so its SIGCHLD can land in that window (a fresh
        clone: the anchor a zombie 30 s after exiting). A task's pane has ``remain-on-exit``
        off, so there the pane goes at the terminal's end and the server with it; only this rig
        keeps dead panes to read them."""
        for _ in range(2):   # tmux, then the kernel; a reap between the two: tmux again
            words = self.tmux("display-message", "-p", "-t", "seat", "#{pane_dead} #{pane_dead_status}",
                              check=False).split()
            dead, status = (words + ["", ""])[:2]
            if dead == "1" and status.isdigit():
                return int(status)
            status = zombie_status(pane)
            if status is not None or status_field(pane, "State") is not None:
                return status   # a zombie's; None: running, or killed by a signal
        return None

    def wrapper_of(self, anchor: int) -> int:
        words = cmdline(anchor)
        assert words[:5][:4] == ["/bin/sh", "-c", ANCHOR, ANCHOR_NAME], words
        return int(words[4])

    def app_server(self, wrapper: int) -> int:
        return poll_for(lambda: next((pid for pid in children(wrapper) if str(STANDIN) in cmdline(pid)), None),
                        "the stand-in app-server under the wrapper", timeout=30)

    def state(self) -> dict:
        try:
            return json.loads((self.seat / "harness-state").read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def declare_codex_seat(self) -> dict[str, str]:
        """Declare the seat as ``st2 up`` launches it (a ``codex`` block around the stand-in);
        return the environment the CLI runs with."""
        (self.seat / "agent.kdl").write_text(
            'agent "coder" {\n    workspace "%s"\n    codex {\n        executable "%s"\n    }\n}\n'
            % (self.base, STANDIN))
        return dict(self.env, CATALOG=str(self.catalog))

    def st2(self, env: dict[str, str], *words: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "st2", *words], capture_output=True, text=True, env=env,
                              cwd=REPO, timeout=120)

    def close(self) -> None:
        self.tmux("kill-server", check=False)
        if self.host is not None and self.host.poll() is None:
            self.host.kill()
            self.host.wait(timeout=10)
        started = self.hello().get("pid")   # a host an `st2 up` pass started (not our child)
        if started:
            os.kill(started, signal.SIGKILL)


@pytest.fixture
def rig():
    base = Path(tempfile.mkdtemp(prefix="st2sf-"))   # short: the sockets must fit sun_path
    running = Rig(base)
    try:
        yield running
    finally:
        running.close()
        shutil.rmtree(base, ignore_errors=True)


def forked(rig: Rig) -> tuple[int, int, int]:
    """Start the host and a pane; return (host, anchor, wrapper) once the wrapper serves."""
    host = rig.start_host()
    anchor = rig.open_pane()
    poll_for(lambda: is_anchor(anchor),
             lambda: f"the pane's anchor\n{rig.screen()}", timeout=30)
    wrapper = rig.wrapper_of(anchor)
    poll_for(lambda: rig.state().get("state") == "idle", lambda: f"the bound thread idle\n{rig.screen()}", timeout=60)
    return host, anchor, wrapper


def test_the_wrapper_runs_forked_from_the_seat_host_on_the_pane_s_terminal(rig: Rig) -> None:
    host, anchor, wrapper = forked(rig)
    # The pane process is the anchor (exec kept its PID): sh, the fixed script, the wrapper's PID.
    assert cmdline(anchor) == ["/bin/sh", "-c", ANCHOR, ANCHOR_NAME, str(wrapper), ""]
    assert children(anchor) == []
    # The wrapper is the child of the host's zygote, in a session of its own, on the pane's terminal.
    zygote = rig.hello()["zygote"]
    assert int(status_field(zygote, "PPid")) == host
    assert int(status_field(wrapper, "PPid")) == zygote and session_of(wrapper) == wrapper
    assert cmdline(wrapper)[1:4] == ["-m", "st2", "seat-host"]
    terminal = os.readlink(f"/proc/{anchor}/fd/1")   # (its 0 is the socket while `read <&3` blocks)
    assert terminal.startswith("/dev/pts/")
    assert [os.readlink(f"/proc/{wrapper}/fd/{n}") for n in (0, 1, 2)] == [terminal] * 3
    server = rig.app_server(wrapper)
    assert int(status_field(server, "PPid")) == wrapper
    # The keyboard typed into the pane reaches the wrapper; its view renders in the pane.
    rig.tmux("send-keys", "-t", "seat", "-l", "/help")
    rig.tmux("send-keys", "-t", "seat", "Enter")
    poll_for(lambda: HELP_LINE in rig.screen(), lambda: f"the help in the pane\n{rig.screen()}", timeout=30)
    # And it delivers.
    name = write_message(rig.seat, "task", body="hello")
    poll_for(lambda: any(name[:-3] in text for text in history(rig.standin)), "the mail delivered", timeout=60)


def test_an_opencode_transcript_seat_s_wrapper_runs_forked_too(rig: Rig) -> None:
    from opencode_support import make_seat as make_opencode_seat, standin_executable

    seat = make_opencode_seat(rig.catalog)
    host = rig.start_host()
    anchor = rig.open_pane([sys.executable, "-m", "st2", "--catalog", str(rig.catalog), "driver", "opencode-session",
                            "--identity", "h.oc", "--runtime-id", "h.oc", "--model", "fake/fake-model", "--view",
                            "transcript", "--", str(standin_executable(rig.base)), "serve"])
    poll_for(lambda: is_anchor(anchor),
             lambda: f"the pane's anchor\n{rig.screen()}", timeout=30)
    wrapper = rig.wrapper_of(anchor)
    zygote = rig.hello()["zygote"]
    assert int(status_field(zygote, "PPid")) == host
    assert int(status_field(wrapper, "PPid")) == zygote
    # The zygote's child makes its own session with its first steps, in parallel with the pane's
    # exec into the anchor: a fresh clone under load read it still in the host's session the
    # moment the anchor was ready.
    poll_for(lambda: session_of(wrapper) == wrapper, "the forked wrapper in a session of its own", timeout=30)
    poll_for(lambda: "opencode serve listening on 127.0.0.1:" in rig.screen(),
             lambda: f"the served session in the pane\n{rig.screen()}", timeout=90)
    rig.tmux("send-keys", "-t", "seat", "-l", "/help")
    rig.tmux("send-keys", "-t", "seat", "Enter")
    poll_for(lambda: HELP_LINE in rig.screen(), lambda: f"the help in the pane\n{rig.screen()}", timeout=30)
    os.kill(anchor, signal.SIGTERM)
    poll_for(lambda: rig.dead_status(anchor) is not None, lambda: f"the anchor to exit\n{rig.screen()}", timeout=30)
    # The wrapper sends the anchor its status before it exits: it ends just after the anchor
    # (a window a loaded machine stretches), so its end is waited for, not assumed.
    poll_for(lambda: not alive(wrapper), "the wrapper to end after its status", timeout=15)
    assert json.loads((seat / "harness-state").read_text())["state"] == "ended"


def attached_pane(rig: Rig) -> tuple[int, int, Path]:
    """Start the host and an opencode pane in the default view (opencode's own TUI); return
    (anchor, wrapper, the seat directory) once the stand-in TUI shows in the pane."""
    from opencode_support import make_seat as make_opencode_seat, standin_executable

    seat = make_opencode_seat(rig.catalog)
    rig.start_host()
    anchor = rig.open_pane([sys.executable, "-m", "st2", "--catalog", str(rig.catalog), "driver", "opencode-session",
                            "--identity", "h.oc", "--runtime-id", "h.oc", "--model", "fake/fake-model", "--",
                            str(standin_executable(rig.base)), "serve"])
    poll_for(lambda: is_anchor(anchor),
             lambda: f"the pane's anchor\n{rig.screen()}", timeout=30)
    poll_for(lambda: "standin-tui " in rig.screen(), lambda: f"the TUI in the pane\n{rig.screen()}", timeout=90)
    return anchor, int(cmdline(anchor)[4]), seat


def tuis(anchor: int) -> list[int]:
    return [pid for pid in children(anchor) if "attach" in cmdline(pid)]


def test_an_opencode_seat_s_own_tui_runs_under_the_pane_anchor_while_its_wrapper_runs_forked(rig: Rig) -> None:
    from opencode_support import standin_executable

    from st2.drivers.opencode.attach_anchor import ANCHOR as TUI_ANCHOR

    anchor, wrapper, seat = attached_pane(rig)
    # The pane process is the TUI-running anchor; the wrapper is forked, in a session of its own.
    assert cmdline(anchor) == ["/bin/sh", "-c", TUI_ANCHOR, ANCHOR_NAME, str(wrapper), "",
                               str(standin_executable(rig.base))]
    assert session_of(wrapper) == wrapper and int(status_field(wrapper, "PPid")) == rig.hello()["zygote"]
    # The TUI is the anchor's child, in the pane's session and foreground group, its stdin the
    # pane's terminal, holding no descriptor of the anchor's; it reached the served session with
    # this launch's password.
    [tui] = tuis(anchor)
    local = json.loads(next(rig.base.glob("state/**/opencode/h.oc/server.json")).read_text())
    assert cmdline(tui)[-4:] == ["attach", f"http://127.0.0.1:{local['port']}", "--session", local["sessionID"]]
    assert f"standin-tui attached {local['sessionID']} foreground" in rig.screen()
    assert session_of(tui) == anchor
    assert sorted(int(n) for n in os.listdir(f"/proc/{tui}/fd")) == [0, 1, 2]
    assert {os.readlink(f"/proc/{tui}/fd/{n}") for n in (0, 1, 2)} == {os.readlink(f"/proc/{anchor}/fd/1")}
    # The server is the forked wrapper's child, and mail still travels the ledger, exactly once.
    assert int(status_field(local["pid"], "PPid")) == wrapper
    name = write_message(seat, "task", body="hello")
    poll_for(lambda: any(name[:-3] in row.get("last_user_text", "") for row in rows(rig.standin / "model-requests.jsonl")),
             lambda: f"the mail delivered\n{rig.screen()}", timeout=60)
    # The TUI exits ("x": status 3): the wrapper's transcript takes the pane back and says so.
    rig.tmux("send-keys", "-t", "seat", "-l", "x")
    poll_for(lambda: "opencode's TUI exited (exit 3); the transcript view follows" in rig.screen(),
             lambda: f"the transcript after the TUI\n{rig.screen()}", timeout=30)
    poll_for(lambda: tuis(anchor) == [] and not alive(tui), "the TUI reaped", timeout=10)
    rig.tmux("send-keys", "-t", "seat", "-l", "/help")
    rig.tmux("send-keys", "-t", "seat", "Enter")
    poll_for(lambda: HELP_LINE in rig.screen(), lambda: f"the help in the pane\n{rig.screen()}", timeout=30)
    assert alive(wrapper) and alive(local["pid"]) and rig.dead_status(anchor) is None


def test_sigterm_of_an_attached_opencode_pane_ends_its_tui_wrapper_and_server(rig: Rig) -> None:
    anchor, wrapper, seat = attached_pane(rig)
    [tui] = tuis(anchor)
    server = json.loads(next(rig.base.glob("state/**/opencode/h.oc/server.json")).read_text())["pid"]
    # The anchor answered `attach` a moment ago: signal it once it is back in its read.
    poll_for(lambda: in_read(anchor), lambda: f"the anchor back in its read\n{rig.screen()}", timeout=30)
    os.kill(anchor, signal.SIGTERM)   # what the supervisor's stop sends the task
    poll_for(lambda: rig.dead_status(anchor) is not None,
             lambda: (f"the anchor to exit\n{process_states(anchor=anchor, wrapper=wrapper, tui=tui, server=server)}\n"
                      f"{rig.screen()}"), timeout=30)
    assert rig.dead_status(anchor) == 143
    poll_for(lambda: not alive(tui) and not alive(wrapper) and not alive(server), "everything ended", timeout=30)
    assert json.loads((seat / "harness-state").read_text())["state"] == "ended"


def test_a_restarted_opencode_server_gets_a_new_tui_from_the_anchor(rig: Rig) -> None:
    anchor, wrapper, _ = attached_pane(rig)
    [old] = tuis(anchor)
    path = next(rig.base.glob("state/**/opencode/h.oc/server.json"))
    first = json.loads(path.read_text())
    os.killpg(first["pid"], signal.SIGKILL)

    def attached_anew() -> list[int] | None:
        # One look at the anchor's children and the server record: reading them again after the
        # poll raced the anchor's own forks (a fresh-clone run found no TUI the moment after one).
        found, now = tuis(anchor), json.loads(path.read_text())
        if now["pid"] != first["pid"] and len(found) == 1 and found != [old] and (
                f"http://127.0.0.1:{now['port']}" in cmdline(found[0])):
            return found
        return None

    [new] = poll_for(attached_anew, lambda: f"a new server and TUI on its port\n{rig.screen()}", timeout=90)
    assert new != old and not alive(old) and alive(wrapper)


def test_the_exit_status_of_a_pane_process_tmux_never_reaps_is_read_from_the_kernel(rig: Rig) -> None:
    """The rig reads a pane process's exit status even when tmux never hears its SIGCHLD (tmux
    3.3a loses it while removing the pane's utmp record; here its tmux server is started with
    SIGCHLD blocked, which it keeps): tmux shows the pane dead with no status, its process a
    zombie whose status the kernel holds."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    try:
        pane = rig.open_pane(["/bin/sh", "-c", "read line; exit 143"])   # tmux inherits the blocked SIGCHLD
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
    assert rig.dead_status(pane) is None
    rig.tmux("send-keys", "-t", "seat", "Enter")
    assert poll_for(lambda: rig.dead_status(pane), "the pane process's exit status", timeout=30) == 143
    # tmux closed the pane's terminal but never reaped its process: dead, with no status.
    words = rig.tmux("display-message", "-p", "-t", "seat", "#{pane_dead}:#{pane_dead_status}").split()
    assert words == ["1:"] and status_field(pane, "State") == "Z"


def test_sigterm_of_the_task_runs_the_wrapper_s_stop_path_and_the_anchor_exits_with_its_status(rig: Rig) -> None:
    _, anchor, wrapper = forked(rig)
    server = rig.app_server(wrapper)
    os.kill(anchor, signal.SIGTERM)
    poll_for(lambda: rig.dead_status(anchor) is not None,
             lambda: (f"the anchor to exit\n{process_states(anchor=anchor, wrapper=wrapper, server=server)}\n"
                      f"{rig.screen()}"), timeout=30)
    # The wrapper's stop path: the app-server's group got SIGTERM, the terminal record says so, and
    # the anchor exited with the wrapper's own status for it (128 + 15).
    assert rig.dead_status(anchor) == 143
    state = rig.state()
    assert (state.get("state"), state.get("exit")) == ("ended", "signal 15")
    # The status is sent before the wrapper exits, so its end follows the anchor's (waited for).
    poll_for(lambda: not alive(wrapper) and not alive(server), "the wrapper and its server to end", timeout=15)


def test_sigkill_of_the_pane_group_ends_the_forked_wrapper(rig: Rig) -> None:
    _, anchor, wrapper = forked(rig)
    server = rig.app_server(wrapper)
    os.killpg(anchor, signal.SIGKILL)   # the supervisor's escalation: the pane's whole group
    poll_for(lambda: not alive(wrapper) and not alive(server), "the wrapper and its server to end", timeout=15)
    assert rig.state().get("state") == "ended"


def test_a_sigkilled_seat_host_leaves_a_running_wrapper_running(rig: Rig) -> None:
    host, anchor, wrapper = forked(rig)
    os.kill(host, signal.SIGKILL)
    rig.host.wait(timeout=10)
    assert alive(wrapper) and alive(anchor)
    assert int(status_field(wrapper, "PPid")) != host
    rig.tmux("send-keys", "-t", "seat", "-l", "/help")
    rig.tmux("send-keys", "-t", "seat", "Enter")
    poll_for(lambda: HELP_LINE in rig.screen(), lambda: f"the help in the pane\n{rig.screen()}", timeout=30)
    name = write_message(rig.seat, "after the host died", body="hello")
    poll_for(lambda: any(name[:-3] in text for text in history(rig.standin)), "the mail delivered", timeout=60)
    assert alive(wrapper) and rig.dead_status(anchor) is None


def test_without_a_seat_host_the_wrapper_runs_in_the_pane_and_says_so_once(rig: Rig) -> None:
    pane = rig.open_pane()
    poll_for(lambda: rig.state().get("state") == "idle", lambda: f"the bound thread idle\n{rig.screen()}", timeout=60)
    assert cmdline(pane)[1:3] == ["-m", "st2"]   # the wrapper itself, as before
    assert rig.screen().count("no seat host of this build answers on") == 1
    rig.app_server(pane)


def test_sigkill_of_the_forked_wrapper_ends_the_anchor_and_the_restarted_seat_loses_and_repeats_nothing(
        rig: Rig) -> None:
    """Under ``st2 up``: at random points between a delivery's attempt and its evidence the forked
    wrapper is SIGKILLed; the anchor exits, the next pass restarts the seat, and every mail reaches
    the thread exactly once (the delivery ledger's guarantees hold across the forked wrappers)."""
    from st2.drivers.codex.pump import correlations_in

    env = rig.declare_codex_seat()
    seed = FaultSeed()
    chooser = seed.random
    launches = rig.standin / "launches"

    def up() -> int:
        result = rig.st2(env, "up", "--once", "--host", "h")
        assert result.returncode == 0, result.stdout + result.stderr
        record = poll_for(lambda: launch_record.read(rig.scope, "h.coder"), "the seat's launch record", timeout=30)
        return record.pid

    def counts() -> dict[str, int]:
        found: dict[str, int] = {}
        for text in history(rig.standin):
            for correlation in correlations_in(text):
                stem = correlation.split(":")[1]
                found[stem] = found.get(stem, 0) + 1
        return found

    names = []
    with seed.reported():
        try:
            for round_number in range(4):
                names.append(write_message(rig.seat, f"task {round_number}", body=("FAKE_SLOW", "FAKE_LATE")[round_number % 2]))
                before = len(launches.read_text().split()) if launches.exists() else 0
                anchor = up()
                poll_for(lambda: is_anchor(anchor), "the anchor", timeout=30)
                wrapper = int(cmdline(anchor)[4])
                poll_for(lambda: launches.exists() and len(launches.read_text().split()) > before, "the app-server")
                time.sleep(chooser.uniform(0.0, 0.8))  # the random kill point (not a wait for progress)
                server = int(launches.read_text().split()[-1])
                os.kill(wrapper, signal.SIGKILL)
                poll_for(lambda: not alive(anchor), "the anchor to exit after its wrapper", timeout=15)
                poll_for(lambda: not alive(server), "the app-server to die with its wrapper", timeout=15)
            anchor = up()
            poll_for(lambda: set(counts()) >= {name[:-3] for name in names}, "every message delivered", timeout=90)
            assert {stem: count for stem, count in counts().items() if count != 1} == {}
            assert sorted(counts()) == sorted(name[:-3] for name in names)
        finally:
            rig.st2(env, "down", "--host", "h")


def test_a_forked_native_seat_outlives_its_supervisor_and_is_adopted_once(rig: Rig) -> None:
    """The supervisor SIGKILLed: the anchor and the forked wrapper run on, the next pass adopts the
    task (same record, same PIDs, no new app-server), ``st2 tasks --json`` lists it, and
    ``st2 down`` of the seat stops the wrapper through its anchor."""
    env = rig.declare_codex_seat()
    launches = rig.standin / "launches"
    with open(rig.base / "up.log", "ab") as log:
        supervisor = subprocess.Popen([sys.executable, "-m", "st2", "up", "--host", "h", "--interval", "30s"],
                                      stdout=log, stderr=subprocess.STDOUT, env=env, cwd=REPO, start_new_session=True)
    try:
        record = poll_for(lambda: launch_record.read(rig.scope, "h.coder"), "the seat's launch record", timeout=60)
        anchor = record.pid
        poll_for(lambda: is_anchor(anchor), "the anchor", timeout=30)
        wrapper = int(cmdline(anchor)[4])
        poll_for(lambda: rig.state().get("state") == "idle", "the bound thread idle", timeout=60)
        started = launches.read_text().split()
    finally:
        os.killpg(supervisor.pid, signal.SIGKILL)
        supervisor.wait(timeout=10)
    assert alive(anchor) and alive(wrapper)
    again = rig.st2(env, "up", "--once", "--host", "h")
    assert again.returncode == 0, again.stdout + again.stderr
    assert launch_record.read(rig.scope, "h.coder") == record
    assert alive(anchor) and alive(wrapper) and launches.read_text().split() == started
    tasks = rig.st2(env, "tasks", "--json", "--host", "h")
    assert tasks.returncode == 0, tasks.stderr
    row = next(row for row in json.loads(tasks.stdout)["tasks"] if row.get("runtimeId") == "h.coder")
    assert (row["runtime"]["state"], row["runtime"]["pid"]) == ("running", anchor), row
    down = rig.st2(env, "down", "--host", "h", "coder")
    assert down.returncode == 0, down.stdout + down.stderr
    poll_for(lambda: not alive(anchor) and not alive(wrapper), "the anchor and the wrapper stopped", timeout=30)
    assert rig.state().get("state") == "ended"
