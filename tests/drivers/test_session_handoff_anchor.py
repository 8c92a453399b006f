"""The pane anchor (st2.drivers.session_handoff.ANCHOR) as a real ``/bin/sh`` against a stand-in
wrapper process: it relays a stop that arrived during the hand-off, relays SIGTERM/SIGHUP, ignores
SIGINT, exits with the wrapper's ``status N`` and exits 137 on end of stream without a status."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

import pytest

from st2.drivers.session_handoff import ANCHOR, ANCHOR_NAME, SHELL
from support import poll_for

pytestmark = pytest.mark.process

# The stand-in wrapper: its end of the status socket is descriptor 3; a SIGTERM or SIGHUP is
# answered with "status <128+n>" (what the wrappers return after their stop path), then it ends.
STANDIN = r'''
import os, signal, sys, time
def stop(number, frame):
    os.write(3, f"status {128 + number}\n".encode())
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGHUP, stop)
os.write(1, b"ready\n")
while True:
    time.sleep(1)
'''


# Puts the descriptor argv[1] at 3 and execs the rest (as the pane process does before the anchor),
# with TERM, HUP and INT at their defaults: a runner started under nohup hands its children HUP
# ignored, and a signal ignored on entry to sh can never be trapped (POSIX), which is the runner's
# doing and not the anchor's.
AT_THREE = ("import os, signal, sys\n"
            "for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):\n"
            "    signal.signal(number, signal.SIG_DFL)\n"
            "os.dup2(int(sys.argv[1]), 3)\n"
            "os.execv(sys.argv[2], sys.argv[2:])")


def at_three(end: socket.socket, argv: list[str], **options) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", AT_THREE, str(end.fileno()), *argv], pass_fds=(end.fileno(),),
                            **options)


class Pair:
    def __init__(self, relay: str = "") -> None:
        anchor_end, wrapper_end = socket.socketpair()
        self.wrapper = at_three(wrapper_end, [sys.executable, "-c", STANDIN], stdout=subprocess.PIPE)
        assert self.wrapper.stdout.readline() == b"ready\n"
        wrapper_end.close()
        self.anchor = at_three(anchor_end, [SHELL, "-c", ANCHOR, ANCHOR_NAME, str(self.wrapper.pid), relay])
        anchor_end.close()

    def trapping(self) -> bool:
        """Whether the anchor's traps are set (its signal mask shows caught TERM and HUP)."""
        for line in open(f"/proc/{self.anchor.pid}/status"):
            if line.startswith("SigCgt:"):
                caught = int(line.split()[1], 16)
                return all(caught & (1 << (number - 1)) for number in (signal.SIGTERM, signal.SIGHUP))
        return False

    def close(self) -> None:
        for process in (self.anchor, self.wrapper):
            if process.poll() is None:
                process.kill()
            process.wait(timeout=10)


@pytest.fixture
def pair_factory():
    made = []

    def make(relay: str = "") -> Pair:
        made.append(Pair(relay))
        return made[-1]

    yield make
    for pair in made:
        pair.close()


def test_a_stop_that_arrived_during_the_hand_off_is_relayed_once_the_traps_are_set(pair_factory) -> None:
    pair = pair_factory("TERM")
    assert pair.anchor.wait(timeout=15) == 128 + signal.SIGTERM


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_the_anchor_relays_a_stop_and_exits_with_the_wrapper_s_status(pair_factory, number) -> None:
    pair = pair_factory()
    poll_for(pair.trapping, "the anchor's traps", timeout=10)
    os.kill(pair.anchor.pid, signal.SIGINT)   # ^C is never the task's end
    os.kill(pair.anchor.pid, number)
    assert pair.anchor.wait(timeout=15) == 128 + number


def test_end_of_stream_without_a_status_exits_137(pair_factory) -> None:
    pair = pair_factory()
    poll_for(pair.trapping, "the anchor's traps", timeout=10)
    pair.wrapper.kill()
    assert pair.anchor.wait(timeout=15) == 137
