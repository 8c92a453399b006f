"""The spawn helper (st2/ding/spawner.py): the DING service's tmux clients are spawned by a small
helper that holds none of the service's descriptors, each in a session of its own; its answers
are subprocess.run's, a command past its timeout proves nothing, and a helper that died leaves
every call spawning the client itself. Each case runs in a fresh interpreter (the helper is
forked from a single-threaded process, as the service forks it at its start)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import REPO, poll_for

pytestmark = pytest.mark.process

PRELUDE = """
import os, resource, signal, sys, time
from st2.ding import spawner
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
held = [os.open("/dev/null", os.O_RDONLY) for _ in range(2000)]   # a service's table
pids = spawner.start(COUNT)
pid = pids[0]
"""


def run_case(body: str, count: int = 1) -> str:
    result = subprocess.run([sys.executable, "-c", f"COUNT = {count}\n" + PRELUDE + body], capture_output=True, text=True,
                            timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_client_spawned_by_the_helper_answers_like_subprocess_run_without_the_callers_descriptors():
    out = run_case("""
result = spawner.run(["sh", "-c", "echo out; echo err >&2; ls /proc/self/fd | wc -l; exit 3"], 5.0)
print(repr((result.returncode, result.stdout.split(), result.stderr)))
print(len(os.listdir(f"/proc/{pid}/fd")))
session = spawner.run([sys.executable, "-c", "import os; print(os.getsid(0))"], 10.0)
print(session.stdout.strip(), os.getsid(0), os.getsid(pid))
""")
    answer, helper_descriptors, sessions = out.strip().split("\n")
    returncode, words, stderr = eval(answer)
    assert (returncode, words[0], stderr) == (3, "out", "err\n")
    assert int(words[1]) <= 8                 # the client: its stdio and a few, not 2000
    assert int(helper_descriptors) <= 8       # the helper itself holds none of the caller's
    client, caller, helper = sessions.split()
    assert len({client, caller, helper}) == 3  # the helper and the client: each a session (an autogroup) of its own


def test_a_command_past_its_timeout_proves_nothing_and_the_helper_serves_on():
    out = run_case("""
started = time.monotonic()
print(spawner.run(["sleep", "30"], 0.3), round(time.monotonic() - started, 1) < 5)
print(spawner.run(["echo", "next"], 5.0).stdout.strip())
""")
    assert out.split("\n")[:2] == ["None True", "next"]


def test_with_the_helpers_gone_every_call_spawns_the_client_itself():
    out = run_case("""
for each in pids:
    os.kill(each, signal.SIGKILL)
    while open(f"/proc/{each}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        time.sleep(0.01)
print(spawner.run(["echo", "direct"], 5.0).stdout.strip(), spawner._helpers == [])
print(spawner.run(["echo", "again"], 5.0).stdout.strip())
print(any(os.path.exists(f"/proc/{each}") for each in pids))     # reaped
""", count=2)
    assert out.split("\n")[:3] == ["direct True", "again", "False"]


def test_the_helper_ends_when_its_service_does():
    out = run_case("""
print(pid, flush=True)
os._exit(0)     # the service dies: its end of the socketpair closes, and the helper ends
""")
    helper = int(out.split()[0])
    poll_for(lambda: state_of(helper) in ("gone", "Z"), timeout=10, what="the helper to end with its service")


def state_of(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return "gone"


def test_an_attached_client_is_ended_on_request_and_every_one_ends_with_the_service():
    """A kept control client's process belongs to the helper that started it: ``end`` terminates
    it, and a service that dies abruptly takes every one with it — even a client that
    would never end at its input's end (tmux 3.3a can hold on to a control client whose peer
    vanished with output unwritten; a ``sleep`` stands for it here)."""
    out = run_case("""
import socket
kept = []
def attached():
    ours, theirs = socket.socketpair()
    kept.append(ours)
    child = spawner.attach(["sleep", "60"], theirs, 5.0)
    theirs.close()
    return child
first = attached()
spawner.end(first)
deadline = time.monotonic() + 10
while os.path.exists(f"/proc/{first}") and time.monotonic() < deadline:   # ended, and reaped by the helper
    time.sleep(0.02)
print(first, os.path.exists(f"/proc/{first}"), flush=True)
second = attached()
print(second, flush=True)
os._exit(0)     # the service dies abruptly: no cleanup of its own runs
""")
    first, first_left, second = out.split()[:3]
    assert first_left == "False"                      # ended on request and reaped by the helper
    poll_for(lambda: state_of(int(second)) in ("gone", "Z"), timeout=10,
             what="the attached client to end with its service")
