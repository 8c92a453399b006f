"""The TUI-running pane anchor (st2.drivers.opencode.attach_anchor.ANCHOR) as a real ``/bin/sh``:
it runs the executable it was exec'd with as ``attach URL --session ID`` on request, with the
password in the environment, the pane's stdin and none of its own descriptors; it refuses any
word out of shape without running anything; it reaps on request; and the wrapper's side
(:class:`AnchoredTui`) watches, signals and reaps the TUI through it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from st2.drivers import pane_anchor
from st2.drivers.opencode import attach_anchor
from st2.drivers.session_handoff import ANCHOR_NAME, SHELL
from support import poll_for

pytestmark = pytest.mark.process

# The stand-in TUI: records its argv, password, stdin and group, then reads stdin until
# "bye" (exit 5) or end of stream (exit 0).
TUI = r'''
import json, os, sys
record = {"argv": sys.argv[1:], "password": os.environ.get("OPENCODE_SERVER_PASSWORD"),
          "stdin": os.readlink("/proc/self/fd/0"), "pgrp": os.getpgrp()}
with open(os.environ["TUI_RECORD"], "a") as out:
    out.write(json.dumps(record) + "\n")
for line in sys.stdin:
    if line.strip() == "bye":
        sys.exit(5)
'''

# Places descriptors at 3 and 4 (as the pane process does before the anchor), signals at their
# defaults (see tests/drivers/test_session_handoff_anchor.py), then execs the rest.
PLACE = ("import os, signal, sys\n"
         "for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
         "    signal.signal(number, signal.SIG_DFL)\n"
         "os.dup2(int(sys.argv[1]), 3)\n"
         "os.dup2(int(sys.argv[2]), 4)\n"
         "os.close(int(sys.argv[1]))\n"
         "os.close(int(sys.argv[2]))\n"
         "os.execv(sys.argv[3], sys.argv[3:])")

PASSWORD = "0123456789abcdef0123456789abcdef"
SESSION = "ses_2c41Zq9"


class Anchor:
    """The anchor under test (its wrapper a sleeping stand-in it can signal), the wrapper's ends
    of its socket and reply pipe, and the stdin pipe it hands the TUI."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.record = base / "tui.jsonl"
        self.marker = base / "marker"
        executable = base / "opencode"
        executable.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{TUI}' \"$@\"\n")
        executable.chmod(0o755)
        self.wrapper = subprocess.Popen(["sleep", "600"])
        ours, theirs = socket.socketpair()
        reply_read, reply_write = os.pipe()
        stdin_read, self.stdin = os.pipe()
        self.anchor = subprocess.Popen(
            [sys.executable, "-c", PLACE, str(theirs.fileno()), str(reply_write),
             SHELL, "-c", attach_anchor.ANCHOR, ANCHOR_NAME, str(self.wrapper.pid), "", str(executable)],
            pass_fds=(theirs.fileno(), reply_write), stdin=stdin_read, cwd=base,
            env={**os.environ, "TUI_RECORD": str(self.record)})
        theirs.close()
        os.close(reply_write)
        os.close(stdin_read)
        self.socket = ours
        self.channel = pane_anchor.AnchorChannel(ours.fileno(), reply_read)
        self.reply = reply_read

    def ask(self, line: str) -> str | None:
        return self.channel.ask(line, seconds=10)

    def launches(self) -> list[dict]:
        return [json.loads(line) for line in self.record.read_text().splitlines()] if self.record.exists() else []

    def close(self) -> None:
        for process in (self.anchor, self.wrapper):
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)
        self.socket.close()
        os.close(self.reply)
        os.close(self.stdin)


@pytest.fixture
def anchor(tmp_path: Path):
    made = Anchor(tmp_path)
    try:
        yield made
    finally:
        made.close()


def test_attach_runs_the_executable_on_the_served_session_with_the_password_and_the_pane_s_stdin(
        anchor: Anchor) -> None:
    answer = anchor.ask(f"attach 41234 {SESSION} {PASSWORD}")
    verb, pid = answer.split()
    assert verb == "attached" and pid.isdigit()
    poll_for(lambda: anchor.launches(), "the TUI to start", timeout=10)
    [launch] = anchor.launches()
    assert launch["argv"] == ["attach", "http://127.0.0.1:41234", "--session", SESSION]
    assert launch["password"] == PASSWORD
    assert sorted(int(n) for n in os.listdir(f"/proc/{pid}/fd")) == [0, 1, 2]   # none of the anchor's
    assert launch["stdin"] == os.readlink(f"/proc/{anchor.anchor.pid}/fd/5")   # the pane's stdin, not /dev/null
    assert launch["pgrp"] == os.getpgid(anchor.anchor.pid)
    # One TUI at a time: a second attach before the reap is refused and runs nothing.
    assert anchor.ask(f"attach 41234 {SESSION} {PASSWORD}") == "refused"
    # The TUI's own end: the reap reports its status, and a reap with none running says so.
    os.write(anchor.stdin, b"bye\n")
    poll_for(lambda: Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"),
             "the TUI to exit (a zombie until the reap)", timeout=10)
    assert anchor.ask("reap") == "detached 5"
    assert not Path(f"/proc/{pid}").exists()
    assert anchor.ask("reap") == "detached none"
    assert len(anchor.launches()) == 1
    # And a new one may run after the reap.
    assert anchor.ask(f"attach 41235 {SESSION} {PASSWORD}").startswith("attached ")
    poll_for(lambda: len(anchor.launches()) == 2, "the second TUI", timeout=10)


@pytest.mark.parametrize("line", [
    "attach 1;touch${IFS}marker ses_a ab",
    "attach 80 ses_$(touch${IFS}marker) ab",
    "attach 80 ses_a ab;touch${IFS}marker",
    "attach 80 ses_a `touch marker`",
    "attach 80 ses_a AB",
    "attach 80 ses_ ab",
    "attach 80 nosession ab",
    "attach 80 ses_a-b ab",
    "attach http://x ses_a ab",
    "attach 80 ses_a",
    "attach 80 ses_a ab extra",
    "attach",
])
def test_a_word_out_of_shape_is_refused_and_nothing_runs(anchor: Anchor, line: str) -> None:
    assert anchor.ask(line) == "refused"
    assert anchor.launches() == [] and not anchor.marker.exists()
    assert anchor.anchor.poll() is None
    assert anchor.ask(f"attach 80 {SESSION} {PASSWORD}").startswith("attached ")   # still serving


def test_status_still_ends_the_anchor_and_an_unknown_request_is_its_end_of_stream(anchor: Anchor) -> None:
    os.write(anchor.socket.fileno(), b"status 0 1\n")   # not a status: the anchor's end, 137
    assert anchor.anchor.wait(timeout=10) == 137


def test_status_n_exits_n(anchor: Anchor) -> None:
    os.write(anchor.socket.fileno(), b"status 42\n")
    assert anchor.anchor.wait(timeout=10) == 42


def test_the_wrapper_side_watches_signals_and_reaps_the_tui_through_the_anchor(anchor: Anchor, monkeypatch) -> None:
    monkeypatch.setattr(pane_anchor, "_channel", anchor.channel)
    tui = attach_anchor.start(41234, SESSION, PASSWORD)
    poll_for(lambda: anchor.launches(), "the TUI to start", timeout=10)
    assert tui.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        tui.wait(timeout=0.2)
    tui.terminate()
    assert tui.wait(timeout=10) == -signal.SIGTERM      # the shell's 143, as Popen would say it
    assert tui.poll() == -signal.SIGTERM and not Path(f"/proc/{tui.pid}").exists()
    tui.kill()   # after the reap: nothing to signal, no error
    # Its own exit is seen by poll().
    second = attach_anchor.start(41234, SESSION, PASSWORD)
    os.write(anchor.stdin, b"bye\n")
    poll_for(lambda: second.poll() is not None, "the TUI's own exit", timeout=10)
    assert second.returncode == 5


def test_an_anchor_that_refuses_is_an_os_error_and_a_silent_one_breaks_the_channel(anchor: Anchor,
                                                                                   monkeypatch) -> None:
    monkeypatch.setattr(pane_anchor, "_channel", anchor.channel)
    with pytest.raises(OSError, match="refused"):
        attach_anchor.start(41234, "not-a-session", PASSWORD)
    os.kill(anchor.anchor.pid, signal.SIGSTOP)   # no answer within the bound
    try:
        assert anchor.channel.ask("reap", seconds=0.3) is None
    finally:
        os.kill(anchor.anchor.pid, signal.SIGCONT)
    # Its late answer must never pass for the next request's: the channel stays broken.
    assert anchor.channel.ask("reap", seconds=2) is None
    with pytest.raises(OSError):
        attach_anchor.start(41234, SESSION, PASSWORD)
