"""The seat host's shared watch, against a real ``st2 seat-host`` and real inotify: one instance
wakes each of more seats than ``fs.inotify.max_user_instances`` allows by default (128), only
the seat that changed, and a watch outlives a SIGKILL of its host."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from support import poll_for, start_seat_host
from st2.doctor.wakeups import inotify_instances
from st2.seathost import wire
from st2.seathost.watch_client import SharedSeatWatch

pytestmark = pytest.mark.process

DEFAULT_MAX_USER_INSTANCES = 128


def seat(root: Path, index: int) -> Path:
    directory = root / "agents" / "h" / f"s{index:03d}"
    (directory / "resources" / "inbox").mkdir(parents=True)
    return directory


def deliver(directory: Path, name: str) -> None:
    temporary = directory / "resources" / f".{name}.tmp"
    temporary.write_text("---\nfrom: h.peer\nsubject: hi\n---\nhello\n")
    os.replace(temporary, directory / "resources" / "inbox" / name)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.kill()
    process.wait(timeout=10)


def test_one_inotify_instance_wakes_each_of_more_seats_than_the_default_limit(tmp_path):
    scope = tmp_path / "scope"
    scope.mkdir()
    host = start_seat_host(scope)
    lines: list[str] = []
    watches = []
    try:
        mine_before = inotify_instances(os.getpid())
        seats = [seat(tmp_path / "catalog", index) for index in range(DEFAULT_MAX_USER_INSTANCES + 2)]
        for directory in seats:
            watch = SharedSeatWatch(directory, wire.socket_path(scope), lines.append)
            assert watch.register(), directory
            watches.append(watch)
        hello = wire.request(wire.socket_path(scope), {"op": "hello"})
        assert hello["watching"] == len(seats) and hello["inotify"] is True
        assert os.getpid() in hello["registrants"]
        assert inotify_instances(host.pid) == 1
        assert inotify_instances(os.getpid()) == mine_before   # no registrant holds one of its own

        # The last seat's mail wakes that seat, through the host (a timer wait would return False).
        last = watches[-1]
        deliver(seats[-1], "1700000000000-aaaaaa.md")
        assert last.wait(30.0) is True and last.wakeups == 1
        # Only that seat: every other watch is quiet.
        assert [watch for watch in watches[:-1] if watch.drain()] == []
        # Its own status record wakes it too; a record beside it that is not delivery's does not.
        (seats[0] / "harness-state").write_text("{}")
        assert watches[0].wait(0.5) is False
        (seats[0] / "status").write_text("available\n")
        assert watches[0].wait(30.0) is True
        assert lines == []
    finally:
        for watch in watches:
            watch.close()
        stop(host)


def test_a_watch_outlives_a_sigkill_of_its_host_and_registers_with_the_next(tmp_path):
    scope = tmp_path / "scope"
    scope.mkdir()
    directory = seat(tmp_path / "catalog", 0)
    host = start_seat_host(scope)
    lines: list[str] = []
    watch = SharedSeatWatch(directory, wire.socket_path(scope), lines.append)
    successor = None
    try:
        assert watch.register()
        os.kill(host.pid, signal.SIGKILL)
        host.wait(timeout=10)
        # The end of the registration is noticed at once and leaves a catch-up wake-up (the next
        # pass reads whatever changed while nobody watched).
        assert watch.wait(30.0) is True
        assert any("is gone; waking on the timer" in line for line in lines), lines
        deliver(directory, "1700000000000-bbbbbb.md")            # while no host watches
        successor = start_seat_host(scope)
        assert watch.wait(30.0) is True                         # re-registered: catch-up wake-up
        assert poll_for(lambda: any("registered again" in line for line in lines), timeout=10), lines
        deliver(directory, "1700000000001-cccccc.md")
        assert watch.wait(30.0) is True                         # woken through the new host
        assert os.getpid() in wire.request(wire.socket_path(scope), {"op": "hello"})["registrants"]
    finally:
        watch.close()
        stop(host)
        if successor is not None:
            stop(successor)
