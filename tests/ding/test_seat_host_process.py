"""DING notifiers forked by the seat host under a real ``st2 up``: SIGKILLing one seat's notifier,
or the seat host they were forked from, loses and duplicates no notice for any seat and never
stops another seat's notifier; notifiers outlive a SIGKILL of both the supervisor and the seat
host and are adopted exactly once."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from ding_support import poll_for, runs_on
from seat_fleet_support import (RESTARTS, SEATS, Rounds, ding_pids, exists, kill_and_restart, parent_of,
                                standin_seats)
from st2.doctor.wakeups import inotify_instances
from st2.seathost import wire
from supervisor_support import Fleet

pytestmark = pytest.mark.process

@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2sh-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    host = host_pid(group)
    if host is not None:
        os.kill(host, signal.SIGKILL)
    shutil.rmtree(base, ignore_errors=True)


def host_pid(fleet) -> int | None:
    try:
        return wire.request(wire.socket_path(fleet.scope.directory), {"op": "hello"}, timeout=1.0).get("pid")
    except OSError:
        return None


def zygote_pid(fleet) -> int | None:
    """The PID of the host's zygote (its one child that forks every per-seat process)."""
    try:
        return wire.request(wire.socket_path(fleet.scope.directory), {"op": "hello"}, timeout=1.0).get("zygote")
    except OSError:
        return None


def test_sigkilling_a_notifier_or_the_seat_host_loses_and_duplicates_no_notice(fleet):
    standins = standin_seats(fleet, SEATS, RESTARTS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    supervisor = fleet.up("--interval", "1s")
    try:
        poll_for(lambda: len(ding_pids(fleet)) == len(SEATS) and len(fleet.running()) == 2 * len(SEATS),
                 timeout=60, what="every seat and its notifier")
        for identity in SEATS:
            poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{identity}.json").exists(), timeout=30,
                     what=f"{identity}'s ownership record")
        host = host_pid(fleet)
        assert host is not None
        zygote = zygote_pid(fleet)
        assert zygote is not None and parent_of(zygote) == host
        for identity, pid in ding_pids(fleet).items():
            assert parent_of(pid) == zygote, f"{identity}'s notifier was not forked by the seat host's zygote"
            assert inotify_instances(pid) == 0            # it wakes through the host's one instance
        assert inotify_instances(host) == 1
        poll_for(lambda: len(wire.request(wire.socket_path(fleet.scope.directory), {"op": "hello"})["registrants"])
                 == len(SEATS), timeout=30, what="every notifier registered with the seat host")

        rounds = Rounds(fleet, standins)

        def kill_host() -> None:
            nonlocal host
            before = ding_pids(fleet)
            zygote = zygote_pid(fleet)
            os.kill(host, signal.SIGKILL)
            poll_for(lambda: not exists(zygote), timeout=10, what="the zygote ending with its host")
            poll_for(lambda: host_pid(fleet) not in (None, host), timeout=30, what="a new seat host")
            host = host_pid(fleet)
            # The host's death stopped no notifier: each runs on with its PID.
            assert {identity: pid for identity, pid in ding_pids(fleet).items() if identity in before} == before

        rounds.post(0)
        kill_and_restart(fleet, "ann", "notifier")
        rounds.post(1)
        kill_host()
        rounds.post(2)
        kill_and_restart(fleet, "bob", "notifier")
        kill_host()
        rounds.post(3)
        kill_and_restart(fleet, "cat", "notifier")
        rounds.post(4)
        rounds.wait_all()
        for identity in SEATS:
            runs_on(fleet.catalog / "logs" / f"h.{identity}.ding.log", passes=3)   # anything extra shows now
        rounds.assert_each_once()
        # cat's notifier, restarted after the last host kill, is the newest host's zygote's child.
        assert parent_of(parent_of(ding_pids(fleet)["cat"])) == host
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")


def test_forked_notifiers_outlive_the_supervisor_and_the_seat_host_and_are_adopted_once(fleet):
    for identity in SEATS[:2]:
        seat = fleet.seat(identity, '    argv "sleep" "600"\n    ding')
        (seat / "resources" / "inbox").mkdir(parents=True)
    first = fleet.up("--interval", "60s")
    live = poll_for(lambda: (lambda running: running if len(running) == 4 else None)(fleet.running()), timeout=60)
    assert live, fleet.log()
    host = host_pid(fleet)
    assert host is not None and all(parent_of(parent_of(live[f"h.{identity}.ding"][0])) == host
                                    for identity in SEATS[:2])
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    os.kill(host, signal.SIGKILL)
    poll_for(lambda: host_pid(fleet) is None, timeout=10, what="the seat host gone")
    assert fleet.running() == live, "killing the supervisor and the seat host must not touch a task"

    fleet.up("--interval", "60s")
    assert poll_for(lambda: fleet.log().count("adopted ") == 4, timeout=30), fleet.log()
    log = fleet.log()
    assert "launched" not in log and "restarted" not in log, log
    assert fleet.running() == live
    assert poll_for(lambda: host_pid(fleet) not in (None, host), timeout=30), "the next pass starts a new seat host"
    inventory = fleet.tasks()
    assert inventory["complete"] is True, inventory
    rows = {row["runtimeId"]: row for row in inventory["tasks"]}
    for identity in SEATS[:2]:
        row = rows[f"h.{identity}.ding"]
        assert row["runtime"]["state"] == "running" and row["runtime"]["pid"] == live[f"h.{identity}.ding"][0]
    fleet.st2("down", "ann")   # one seat's notifier stops alone
    running = fleet.running()
    assert "h.ann.ding" not in running and running["h.bob.ding"] == live["h.bob.ding"]


def test_sigkilling_the_zygote_stops_no_notifier_and_the_next_seat_still_forks(fleet):
    standins = standin_seats(fleet, SEATS[:2])
    supervisor = fleet.up("--interval", "1s")
    try:
        poll_for(lambda: len(ding_pids(fleet)) == 2 and len(fleet.running()) == 4, timeout=60,
                 what="both seats and their notifiers")
        for identity in SEATS[:2]:
            poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{identity}.json").exists(), timeout=30,
                     what=f"{identity}'s ownership record")
        host, zygote = host_pid(fleet), zygote_pid(fleet)
        before = ding_pids(fleet)
        assert all(parent_of(pid) == zygote for pid in before.values())
        os.kill(zygote, signal.SIGKILL)
        poll_for(lambda: not exists(zygote), timeout=10, what="the zygote gone")
        assert ding_pids(fleet) == before, "the zygote's death stopped a notifier"
        rounds = Rounds(fleet, {identity: standins[identity] for identity in SEATS[:2]})
        rounds.post(0)
        rounds.wait_all("the notice delivered after the zygote died")
        rounds.assert_each_once()
        # A new seat's notifier still forks: from a new zygote of the same host.
        seat = fleet.seat("cat", '    argv "sleep" "600"\n    ding')
        (seat / "resources" / "inbox").mkdir(parents=True)
        poll_for(lambda: "cat" in ding_pids(fleet), timeout=60, what="the new seat's notifier")
        assert host_pid(fleet) == host
        fresh = zygote_pid(fleet)
        assert fresh not in (None, zygote) and parent_of(fresh) == host
        assert parent_of(ding_pids(fleet)["cat"]) == fresh
        assert {name: pid for name, pid in ding_pids(fleet).items() if name != "cat"} == before
        assert "the zygote is gone; forking a new one" in (fleet.catalog / "logs" / "h.seat-host.log").read_text()
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
