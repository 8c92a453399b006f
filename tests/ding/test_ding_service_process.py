"""The DING service under a real ``st2 up`` with real tmux seats: each seat's DING task is a
stub forked by the seat host whose loop one DING service runs in a thread. SIGKILLing one seat's
stub stops only that seat's thread and the restarted stub is served again; SIGKILLing the
service makes every stub serve its seat itself (said in its log, named by ``st2 doctor``); no
notice is lost or typed twice for any seat across both; stopping one stub stops only that seat's
delivery."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from ding_support import poll_for, runs_on, write_message
from seat_fleet_support import RESTARTS, SEATS, Rounds, ding_pids, kill_and_restart, parent_of, standin_seats
from st2.ding import service_wire
from st2.doctor.wakeups import inotify_instances
from st2.runtime.tmux import client_argv
from st2.seathost import wire
from supervisor_support import Fleet

pytestmark = pytest.mark.process

def hello(path: Path) -> dict | None:
    try:
        return wire.request(path, {"op": "hello"}, timeout=2.0)
    except OSError:
        return None


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2ds-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    for path in (service_wire.socket_path(group.scope.directory), wire.socket_path(group.scope.directory)):
        answer = hello(path)
        if answer is not None:
            os.kill(answer["pid"], signal.SIGKILL)
    shutil.rmtree(base, ignore_errors=True)


def service(fleet) -> dict | None:
    return hello(service_wire.socket_path(fleet.scope.directory))


def served(fleet) -> dict[str, int]:
    """target identity -> stub pid of every seat the service serves with a live shared watch."""
    answer = service(fleet) or {}
    return {row["target"].split(".", 1)[1]: row["stub"] for row in answer.get("serving", ()) if row["watch"]}


def ding_log(fleet, identity: str) -> Path:
    return fleet.catalog / "logs" / f"h.{identity}.ding.log"


def control_clients(fleet, identity: str) -> list[int]:
    """The pids of the control-mode clients attached to ``identity``'s tmux server."""
    listed = subprocess.run(client_argv(fleet.scope.socket(f"h.{identity}"), "list-clients", "-F",
                                        "#{client_pid} #{client_flags}"), capture_output=True, text=True, timeout=10)
    return [int(line.split()[0]) for line in listed.stdout.splitlines() if "control-mode" in line]


def start(fleet) -> dict[str, Path]:
    standins = standin_seats(fleet, SEATS, RESTARTS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    return standins


def wait_served(fleet) -> None:
    poll_for(lambda: len(ding_pids(fleet)) == len(SEATS) and served(fleet) == ding_pids(fleet), timeout=60,
             what="every seat's stub served by the DING service")


def test_sigkilling_a_stub_or_the_ding_service_loses_and_duplicates_no_notice(fleet):
    standins = start(fleet)
    supervisor = fleet.up("--interval", "1s")
    try:
        wait_served(fleet)
        host = hello(wire.socket_path(fleet.scope.directory))["pid"]
        zygote = hello(wire.socket_path(fleet.scope.directory))["zygote"]
        assert parent_of(zygote) == host                  # the host's one child that forks for it
        first_service = service(fleet)["pid"]
        assert parent_of(first_service) == zygote        # forked by the seat host's zygote, pre-imported
        for identity, pid in ding_pids(fleet).items():
            assert parent_of(pid) == zygote, f"{identity}'s stub was not forked by the seat host's zygote"
            assert inotify_instances(pid) == 0
        assert inotify_instances(first_service) == 0      # its seats wake through the host's one instance
        assert inotify_instances(host) == 1
        for identity in SEATS:
            poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{identity}.json").exists(), timeout=30,
                     what=f"{identity}'s ownership record")

        rounds = Rounds(fleet, standins)
        rounds.post(0)
        rounds.wait_all("the first notices")
        for identity in SEATS:   # the service keeps each seat's control client, spawned by its helper
            clients = control_clients(fleet, identity)
            assert len(clients) == 1 and parent_of(parent_of(clients[0])) == first_service, (identity, clients)
        kill_and_restart(fleet, "ann", "stub")
        # ann's old thread stopped, and the restarted stub is served again: one row per seat.
        wait_served(fleet)
        assert [row["target"] for row in service(fleet)["serving"]] == [f"h.{identity}" for identity in SEATS]
        rounds.post(1)
        before = ding_pids(fleet)
        os.kill(first_service, signal.SIGKILL)
        for identity in SEATS:
            poll_for(lambda: "SERVING h.%s MYSELF" % identity in ding_log(fleet, identity).read_text(), timeout=30,
                     what=f"{identity}'s stub to serve its seat itself")
            assert f"the DING service (pid {first_service}) is gone" in ding_log(fleet, identity).read_text()
        assert ding_pids(fleet) == before                  # the service's death stopped no stub
        for identity in SEATS:                             # and its control clients ended with it
            poll_for(lambda: control_clients(fleet, identity) == [], timeout=10,
                     what=f"{identity}'s control client to end with the service")
        doctor = fleet.st2("doctor").stdout
        for identity in SEATS:
            assert f"h.{identity}.ding: ding-serves-itself: pid {before[identity]} serves its seat itself" in doctor, doctor
        rounds.post(2)
        rounds.wait_all("the notices after the service died")
        kill_and_restart(fleet, "bob", "stub")  # restarted: served by a new service, on demand
        poll_for(lambda: "bob" in served(fleet) and service(fleet)["pid"] != first_service, timeout=60,
                 what="a new DING service serving bob's restarted stub")
        rounds.post(3)
        rounds.wait_all()
        for identity in SEATS:
            runs_on(ding_log(fleet, identity), passes=3)   # anything extra shows now
        rounds.assert_each_once()
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")


def test_stopping_one_stub_stops_only_that_seats_delivery(fleet):
    standins = start(fleet)
    supervisor = fleet.up("--interval", "60s")
    try:
        wait_served(fleet)
    finally:
        fleet.stop(supervisor)                             # nothing restarts the stub we stop
    try:
        stubs = ding_pids(fleet)
        os.killpg(stubs["ann"], signal.SIGTERM)
        poll_for(lambda: "ann" not in ding_pids(fleet), timeout=30, what="ann's stub to exit on SIGTERM")
        poll_for(lambda: "ann" not in served(fleet), timeout=30, what="the service to stop ann's thread")
        assert {name: pid for name, pid in ding_pids(fleet).items()} == {"bob": stubs["bob"], "cat": stubs["cat"]}
        assert served(fleet) == {"bob": stubs["bob"], "cat": stubs["cat"]}
        assert "SERVING" not in ding_log(fleet, "ann").read_text()   # it stopped, it did not serve itself
        for identity in ("ann", "bob"):
            write_message(fleet.catalog / "agents" / "h" / identity, f"after the stop for {identity}")
        bob = standins["bob"] / "events"
        poll_for(lambda: bob.exists() and bob.read_text().count("submit\t") == 1, timeout=60,
                 what="bob's notice while ann's delivery is stopped")
        runs_on(ding_log(fleet, "bob"), passes=3)
        ann = standins["ann"] / "events"
        assert "submit\t" not in (ann.read_text() if ann.exists() else "")
    finally:
        fleet.st2("down")


def gone(pid: int) -> bool:
    """No process ``pid`` at all, not even a zombie: whoever forked it has reaped it."""
    return not Path(f"/proc/{pid}").exists()


def test_with_no_zygote_the_host_forks_every_ding_task_itself_and_each_still_delivers_once(fleet):
    standins = start(fleet)
    fleet.env["ST2_SEAT_HOST_ZYGOTE"] = "off"   # no zygote can be had: the host's own fallback forks
    supervisor = fleet.up("--interval", "1s")
    try:
        wait_served(fleet)
        host = hello(wire.socket_path(fleet.scope.directory))
        assert host["zygote"] is None
        stubs = ding_pids(fleet)
        for identity, pid in stubs.items():
            assert parent_of(pid) == host["pid"], f"{identity}'s stub was not forked by the seat host itself"
        assert parent_of(service(fleet)["pid"]) == host["pid"]   # the DING service too
        log = (fleet.catalog / "logs" / "h.seat-host.log").read_text()
        assert log.count("no zygote (ST2_SEAT_HOST_ZYGOTE=off): forking every per-seat process here, "
                         "from the host itself\n") == 1, log
        assert "zygote started" not in log, log
        rows = {row["runtimeId"]: row for row in fleet.tasks()["tasks"]}
        for identity, pid in stubs.items():
            assert rows[f"h.{identity}.ding"]["runtime"]["state"] == "running"
            assert rows[f"h.{identity}.ding"]["runtime"]["pid"] == pid
        for identity in SEATS:
            poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{identity}.json").exists(), timeout=30,
                     what=f"{identity}'s ownership record")

        rounds = Rounds(fleet, standins)
        rounds.post(0)
        rounds.wait_all()
        for identity in SEATS:
            runs_on(ding_log(fleet, identity), passes=3)   # anything extra shows now
        rounds.assert_each_once()

        fleet.st2("down", "ann")   # one seat's DING task stops alone, and the host reaps it
        poll_for(lambda: gone(stubs["ann"]), timeout=30, what="ann's stub ended and reaped by the seat host")
        assert "ann" not in ding_pids(fleet)
        assert ding_pids(fleet) == {"bob": stubs["bob"], "cat": stubs["cat"]}
        others = Rounds(fleet, {identity: standins[identity] for identity in ("bob", "cat")})
        others.notices = {identity: rounds.notices[identity][:] for identity in ("bob", "cat")}
        others.post(1)
        others.wait_all("the notices after ann's stop")
        for identity in ("bob", "cat"):
            runs_on(ding_log(fleet, identity), passes=3)
        others.assert_each_once()
        assert "SERVING" not in "".join(ding_log(fleet, identity).read_text() for identity in SEATS)
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
