"""The DING service's kept tmux control-mode clients (st2/ding/control_client.py): a command list
sent through one answers exactly as a spawned client does, text is never tmux syntax, a pane
cannot forge an answer, a client of a dead or replaced server is never sent a list, and the pool
bounds how many a process keeps."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from st2.ding.control_client import ControlClient, ControlPool, command_line
from st2.ding.terminal import SESSION
from st2.runtime.tmux import client_argv
from support import kill_tmux_server, poll_for

HOSTILE = '[DING] new st2 message: [id:abc123] "q" \\ $HOME ~ #{pid} ; {x} \'s %end 1 2 1 📬 (from h.a); check your inbox'


@pytest.fixture
def server():
    """A real tmux server with the PTY backend's session, 100x10, its pane holding ``cat``."""
    directory = Path(tempfile.mkdtemp(prefix="st2cc-", dir="/tmp"))
    path = str(directory / "s")

    def start(command: str = "cat") -> str:
        subprocess.run(client_argv(path, "new-session", "-d", "-s", SESSION, "-x", "100", "-y", "10", command),
                       check=True, timeout=10)
        return path

    yield start
    subprocess.run(["tmux", "-S", path, "kill-server"], capture_output=True, timeout=10)
    subprocess.run(["rm", "-rf", str(directory)])


def attach_here(argv: list[str], stream: socket.socket, timeout: float) -> int | None:
    """What the DING service's spawn helper does for an attach, done by this test process."""
    process = subprocess.Popen(argv, stdin=stream, stdout=stream, stderr=subprocess.DEVNULL, start_new_session=True)
    threading.Thread(target=process.wait, daemon=True).start()
    return process.pid


def open_here(path: str, session: str, timeout: float) -> ControlClient | None:
    return ControlClient.open(path, session, timeout, attach=attach_here)


def spawned(path: str, words: list[str]) -> tuple[int, str, str]:
    result = subprocess.run(client_argv(path, *words), capture_output=True, text=True, timeout=10)
    return result.returncode, result.stdout, result.stderr


def controlled(pool: ControlPool, path: str, words: list[str]) -> tuple[int, str, str] | None:
    taken, result = pool.run(path, SESSION, words, 2.0)
    assert taken
    return None if result is None else (result.returncode, result.stdout, result.stderr)


@pytest.mark.process
def test_each_list_answers_as_a_spawned_client_and_hostile_text_is_never_syntax(server):
    path = server("printf '%%end 1 2 1\\n%%begin 1 2 1\\nhello\\n'; cat")
    poll_for(lambda: "hello" in spawned(path, ["capture-pane", "-p", "-t", SESSION])[1], "the pane's text")
    pool = ControlPool(opener=open_here)
    observe = ["display-message", "-p", "-t", SESSION, "#{cursor_x} #{cursor_y} #{pane_width} #{pane_height}",
               ";", "capture-pane", "-p", "-e", "-t", SESSION]
    for words in (observe,
                  ["has-session", "-t", SESSION],
                  ["has-session", "-t", "nosuch"],
                  ["list-buffers", "-F", "#{buffer_name}"],
                  ["paste-buffer", "-b", "nonexistent", "-t", SESSION, ";", "display-message", "-p", "after"],
                  ["display-message", "-p", "first", ";", "display-message", "-p", "second"]):
        assert controlled(pool, path, words) == spawned(path, words), words
    # A notice's characters reach the buffer exactly: quotes, $, ~, #{, ;, braces, a forged guard line.
    saved = Path(path).parent / "saved"
    assert controlled(pool, path, ["set-buffer", "-b", "st2-ding-t", "--", HOSTILE, ";",
                                   "save-buffer", "-b", "st2-ding-t", str(saved)]) == (0, "", "")
    assert saved.read_text(encoding="utf-8") == HOSTILE
    assert pool.opened == 1
    pool.close_all()


@pytest.mark.process
def test_the_control_client_never_sizes_the_window(server):
    """Attached with ignore-size: the 100x10 window keeps its size (a plain control client is
    80x24 and would resize it)."""
    path = server()
    size = ["display-message", "-p", "-t", SESSION, "#{window_width}x#{window_height}"]
    pool = ControlPool(opener=open_here)
    assert controlled(pool, path, size) == (0, "100x10\n", "")
    clients = spawned(path, ["list-clients", "-F", "#{client_flags}"])[1]
    assert "control-mode" in clients and "ignore-size" in clients and "no-output" in clients
    assert spawned(path, size)[1] == "100x10\n"
    pool.close_all()


@pytest.mark.process
def test_a_client_of_a_replaced_server_is_opened_again_before_any_list_is_sent(server):
    path = server()
    pool = ControlPool(opener=open_here)
    first = controlled(pool, path, ["display-message", "-p", "#{pid}"])
    kill_tmux_server(path)
    server()
    second = controlled(pool, path, ["display-message", "-p", "#{pid}"])
    assert second is not None and second[0] == 0 and second != first   # the new server answered
    assert pool.opened == 2
    pool.close_all()


@pytest.mark.process
def test_no_session_means_no_client_and_the_caller_spawns(tmp_path):
    pool = ControlPool(opener=open_here)
    assert pool.run(str(tmp_path / "none"), SESSION, ["has-session"], 1.0) == (False, None)
    assert pool.opened == 0 and pool.clients == {}


@pytest.mark.process
def test_the_pool_closes_idle_clients_and_keeps_at_most_its_limit(server, tmp_path):
    now = [0.0]
    pool = ControlPool(limit=1, idle=30.0, clock=lambda: now[0], opener=open_here)
    first = server()
    second_dir = Path(tempfile.mkdtemp(prefix="st2cc-", dir="/tmp"))
    second = str(second_dir / "s")
    subprocess.run(client_argv(second, "new-session", "-d", "-s", SESSION, "cat"), check=True, timeout=10)
    try:
        assert controlled(pool, first, ["has-session"]) == (0, "", "")
        kept = pool.clients[first]
        assert controlled(pool, second, ["has-session"]) == (0, "", "")
        assert list(pool.clients) == [second] and kept.closed   # the limit evicted the idle one
        poll_for(lambda: "control-mode" not in spawned(first, ["list-clients", "-F", "#{client_flags}"])[1],
                 "the evicted client detached")
        now[0] = 29.0
        assert pool.close_idle() == 0
        now[0] = 30.0
        assert pool.close_idle() == 1 and pool.clients == {}
        poll_for(lambda: "control-mode" not in spawned(second, ["list-clients", "-F", "#{client_flags}"])[1],
                 "the idle client detached")
    finally:
        subprocess.run(["tmux", "-S", second, "kill-server"], capture_output=True, timeout=10)
        subprocess.run(["rm", "-rf", str(second_dir)])


def fake_tmux(answer):
    """A ControlClient whose peer is a thread playing tmux: ``answer(line, nonce_line)`` returns
    the bytes to write for each line received."""
    ours, theirs = socket.socketpair()

    def play():
        buffered = b""
        try:
            while chunk := theirs.recv(65536):
                buffered += chunk
                while b"\n" in buffered:
                    line, _, buffered = buffered.partition(b"\n")
                    theirs.sendall(answer(line.decode()))
        except OSError:
            pass   # the client closed its end

    threading.Thread(target=play, daemon=True).start()
    return ControlClient(ours, 0)


def block(number: int, *lines: str, ok: bool = True) -> bytes:
    guard = f"1796000000 {number} 1"
    return (f"%begin {guard}\n" + "".join(line + "\n" for line in lines)
            + f"%{'end' if ok else 'error'} {guard}\n").encode()


def sentinel(line: str) -> str | None:
    return line.rsplit(" ", 1)[1] if line.startswith("display-message -p ") else None


@pytest.mark.parametrize("forgery", [
    "a forged guard ends the block early",
    "more answers than commands",
    "the client's exit",
    "a plain line outside a block",
    "no answer",
])
def test_output_that_does_not_frame_as_tmux_frames_it_proves_nothing(forgery):
    def answer(line: str) -> bytes:
        nonce = sentinel(line)
        if nonce:
            return block(9, nonce)
        if forgery == "a forged guard ends the block early":
            return b"%begin 1796000000 5 1\nline one\n%end 1796000000 5 1\nline two\n%end 1796000000 5 1\n"
        if forgery == "more answers than commands":
            return block(5, "x") + block(6, "y")
        if forgery == "the client's exit":
            return b"%exit\n"
        if forgery == "a plain line outside a block":
            return b"stray\n" + block(5, "x")
        return b""

    client = fake_tmux(answer)
    assert client.run(["capture-pane", "-p"], 0.5) is None
    assert client.closed   # never reused: its stream may hold the rest of an answer
    assert client.run(["capture-pane", "-p"], 0.5) is None


def test_a_well_framed_answer_with_notifications_between_blocks_is_taken():
    def answer(line: str) -> bytes:
        nonce = sentinel(line)
        if nonce:
            return b"%window-add @2\n" + block(9, nonce)
        return block(5, "x") + b"%sessions-changed\n" + block(6, "no such thing", ok=False)

    client = fake_tmux(answer)
    result = client.run(["display-message", "-p", "x", ";", "paste-buffer", ";", "display-message", "-p", "z"], 1.0)
    assert (result.returncode, result.stdout, result.stderr) == (1, "x\n", "no such thing\n")
    assert not client.closed


def test_a_command_line_quotes_every_word_and_keeps_separators():
    assert command_line(["set-buffer", "--", 'a;"$b"', ";", "send-keys", "Enter"]) == \
        '"set-buffer" "--" "a\\u003b\\u0022\\u0024b\\u0022" ; "send-keys" "Enter"'


def flood_notifications(path: str, count: int = 8000) -> None:
    """Make the server owe every control client ``count`` notifications (one per named buffer
    set, from one sourced file), more than a socket buffer holds while nobody reads them."""
    script = Path(path).parent / "flood.tmux"
    script.write_text("".join(f"set-buffer -b flood{number} x\n" for number in range(count)))
    subprocess.run(client_argv(path, "source-file", str(script)), check=True, timeout=60, capture_output=True)


def control_pids(path: str) -> list[str]:
    """The pids of the server's control-mode clients; a listing that fails is an assertion naming
    tmux's own answer (never read as "no client")."""
    code, listed, error = spawned(path, ["list-clients", "-F", "#{client_pid} #{client_flags}"])
    assert code == 0, f"list-clients exited {code}: {error!r}"
    return [line.split()[0] for line in listed.splitlines() if "control-mode" in line]


@pytest.mark.process
def test_a_closed_client_is_detached_even_when_the_server_owes_it_output(server):
    """tmux 3.3a keeps a control client whose peer vanished with output still unwritten; closing
    detaches it first (and reads until its %exit), so it ends."""
    path = server()
    pool = ControlPool(opener=open_here)
    assert controlled(pool, path, ["has-session"]) == (0, "", "")
    listed = spawned(path, ["list-clients", "-F", "#{client_pid} #{client_flags}"])[1]
    assert len(control_pids(path)) == 1, listed
    flood_notifications(path)
    pool.close_all()
    poll_for(lambda: control_pids(path) == [], "the closed client to end", timeout=10)


def test_without_a_spawn_helper_no_control_client_is_kept(tmp_path):
    """Only a helper starts one (it ends them when its service dies); elsewhere the caller spawns."""
    pool = ControlPool()
    assert pool.run(str(tmp_path / "s"), SESSION, ["has-session"], 1.0) == (False, None)
    assert pool.opened == 0


def test_a_late_block_of_the_servers_own_command_leaves_the_client_usable():
    """tmux may write its own attach command's block (flags 0) and a notification after the
    first answer: that is no reason to give the client up, and a block still arriving is
    skipped whole by the next answer; a block of the client's own it never asked for (flags 1)
    or its ``%exit`` is."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    client = ControlClient(ours, pid=0)
    theirs.sendall(b"%begin 17 270 0\n%end 17 270 0\n%session-changed $0 st2\n%begin 18 271 0\nhalf")
    assert client.usable()
    nonce = []

    def answer() -> None:
        line = theirs.recv(4096).decode()
        nonce.append(line.split()[-1])
        theirs.sendall(f" of it\n%end 18 271 0\n%begin 19 272 1\n{nonce[0]}\n%end 19 272 1\n".encode())

    replier = threading.Thread(target=answer)
    replier.start()
    assert client.run([], 2.0) is not None
    replier.join()
    for unasked in (b"%begin 20 273 1\n%end 20 273 1\n", b"%exit\n"):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        client = ControlClient(ours, pid=0)
        theirs.sendall(unasked + b"%exit\n")
        assert not client.usable() and client.closed
        theirs.close()


def test_a_pool_full_of_busy_clients_opens_nothing_and_the_caller_spawns():
    """A list for a seat with no client opens one; with the pool at its limit and every kept
    client busy it opens nothing (not taken: the caller spawns a client), and an idle kept client
    is evicted to make room."""
    opened: list[str] = []

    def opener(path, session, timeout):
        opened.append(path)
        return fake_tmux(lambda line: block(1, "ok") if not sentinel(line) else block(2, sentinel(line)))

    pool = ControlPool(limit=1, opener=opener)
    taken, result = pool.run("a", SESSION, ["has-session"], 2.0)
    assert taken and (result.returncode, result.stdout) == (0, "ok\n") and list(pool.clients) == ["a"]
    pool.busy.add("a")
    assert pool.run("b", SESSION, ["has-session"], 2.0) == (False, None)
    assert opened == ["a"] and list(pool.clients) == ["a"]
    pool.busy.discard("a")
    taken, _ = pool.run("b", SESSION, ["has-session"], 2.0)   # the idle client makes room
    assert taken and opened == ["a", "b"] and list(pool.clients) == ["b"]
    pool.close_all()
