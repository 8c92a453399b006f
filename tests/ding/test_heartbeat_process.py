"""A SIGSTOPped DING service under a real ``st2 up`` with real tmux seats (issue 31). It holds
every seat's lock while running none of their loops, so the seats are held: no notice lands and
``st2 doctor`` fails naming the stopped service and each seat it holds (never "serves itself").
Each registered stub pings the service every 2 s; a ping unanswered for the bound (10 s) makes a
stub SIGKILL the service's process group, the seat locks free, and every stub serves its seat
itself from the ownership record: each notice posted during the stop lands exactly once, and a
SIGCONT afterwards finds nothing to wake: no notice is typed twice, on the stand-in's input or
on the pane's screen."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest

from ding_support import poll_for, runs_on
from seat_fleet_support import (RESTARTS, SEATS, Rounds, ding_fleet, ding_pids, exists, hello, pane_screen, served,
                                standin_seats)
from st2.ding import service_wire

pytestmark = [pytest.mark.process, pytest.mark.long]

KILLED = "did not answer its heartbeat within 10s and was SIGKILLed by pid "


@pytest.fixture
def fleet():
    yield from ding_fleet("st2hb-")


def ding_log(fleet, identity: str) -> str:
    return (fleet.catalog / "logs" / f"h.{identity}.ding.log").read_text()


def serve_all(fleet) -> tuple[dict[str, int], int]:
    poll_for(lambda: len(ding_pids(fleet)) == len(SEATS) and served(fleet) == ding_pids(fleet), timeout=60,
             what="every seat's stub served by the DING service")
    for identity in SEATS:
        poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{identity}.json").exists(), timeout=30,
                 what=f"{identity}'s ownership record")
    return ding_pids(fleet), hello(service_wire.socket_path(fleet.scope.directory))["pid"]


def first_paste(standins, rounds: Rounds, round_number: int) -> bool:
    return any(f"round {round_number} for {identity}" in ((standins[identity] / "events").read_text()
                                                         if (standins[identity] / "events").exists() else "")
               for identity in SEATS)


def assert_each_once_on_screen(fleet, rounds: Rounds) -> None:
    for identity in SEATS:
        screen = pane_screen(fleet, identity)
        for round_number in range(len(rounds.notices[identity])):
            subject = f"round {round_number} for {identity}"
            assert screen.count(subject) == 1, (identity, subject, screen)


def test_a_sigstopped_ding_service_is_sigkilled_by_the_stubs_heartbeat_and_every_notice_lands_once(fleet):
    standins = standin_seats(fleet, SEATS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    supervisor = fleet.up("--interval", "1s")
    try:
        stubs, service = serve_all(fleet)
        rounds = Rounds(fleet, standins)
        rounds.post(0)
        rounds.wait_all("the notices before the stop")

        stopped_at = time.monotonic()
        os.killpg(service, signal.SIGSTOP)          # the service and any tmux client it runs
        rounds.post(1)
        poll_for(lambda: first_paste(standins, rounds, 1), timeout=service_wire.HEARTBEAT_BOUND_SECONDS + 30,
                 what="the first notice after the takeover")
        first = time.monotonic() - stopped_at
        rounds.wait_all("every notice posted while the service was stopped")
        every = time.monotonic() - stopped_at
        print(f"RESULT takeover_first_s={first:.2f} takeover_all_s={every:.2f}")
        # Nothing could deliver while the stopped service held the seat locks: not before the bound
        # (less the one ping interval a ping may have been out when the stop came).
        assert first >= service_wire.HEARTBEAT_BOUND_SECONDS - service_wire.HEARTBEAT_SECONDS, first
        assert not exists(service)
        killers = [identity for identity in SEATS
                   if f"the DING service (pid {service}) left a ping unanswered for 10s (stopped); SIGKILLing its "
                      f"process group {service} so its seat locks free" in ding_log(fleet, identity)]
        assert killers, "no stub said it killed the service: " + "".join(ding_log(fleet, identity) for identity in SEATS)
        killer_pids = {str(stubs[identity]) for identity in killers}
        for identity in SEATS:   # each stub says why, the killer's pid read from the kill record
            said = re.findall(rf"the DING service \(pid {service}\) {KILLED}(\d+); SERVING h\.{identity} MYSELF",
                              ding_log(fleet, identity))
            assert len(said) == 1 and said[0] in killer_pids, (identity, said, killer_pids)
        assert ding_pids(fleet) == stubs                 # the takeover stopped no stub

        try:
            os.killpg(service, signal.SIGCONT)            # too late: the service is gone
        except ProcessLookupError:
            pass
        rounds.post(2)
        rounds.wait_all("the notices after the SIGCONT")
        for identity in SEATS:
            runs_on(fleet.catalog / "logs" / f"h.{identity}.ding.log", passes=3)   # anything extra shows now
        rounds.assert_each_once()
        assert_each_once_on_screen(fleet, rounds)
        doctor = fleet.st2("doctor").stdout
        for identity in SEATS:
            said = re.findall(rf"h\.{identity}\.ding: ding-serves-itself: pid {stubs[identity]} serves its seat itself, "
                              rf"not through the DING service \(the DING service \(pid {service}\) {KILLED}(\d+)\)",
                              doctor)
            assert len(said) == 1 and said[0] in killer_pids, doctor
        assert "ding-service-unresponsive" not in doctor, doctor
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")


def test_doctor_names_a_stopped_ding_service_and_each_seat_it_holds_until_the_heartbeat_frees_them(fleet):
    standins = standin_seats(fleet, SEATS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    supervisor = fleet.up("--interval", "1s")
    try:
        stubs, service = serve_all(fleet)
        # The stubs stopped first, so no heartbeat can end the service's stop while Doctor looks.
        for pid in stubs.values():
            os.killpg(pid, signal.SIGSTOP)
        os.killpg(service, signal.SIGSTOP)
        rounds = Rounds(fleet, standins)
        rounds.post(0)
        doctor = fleet.st2("doctor")
        assert doctor.returncode == 1, doctor.stdout
        lines = doctor.stdout
        assert (f"failure: supervisor: ding-service-unresponsive: the DING service (pid {service}, stopped) holds "
                f"its lock but answers nothing on {service_wire.socket_path(fleet.scope.directory)} within 2 s") in lines
        for identity in SEATS:
            assert (f"failure: h.{identity}.ding: ding-service-unresponsive: the unresponsive DING service (pid "
                    f"{service}) holds this seat's lock: no notice reaches it until pid {stubs[identity]}'s heartbeat "
                    "(a ping unanswered 10 s) kills the service") in lines, lines
        assert "ding-serves-itself" not in lines and "wake-timer-only" not in lines, lines
        assert all(rounds.submitted(identity) == [] for identity in SEATS)   # held: nothing typed

        for pid in stubs.values():
            os.killpg(pid, signal.SIGCONT)
        rounds.wait_all("every notice once the stubs' heartbeat killed the service")
        assert not exists(service)
        for identity in SEATS:
            runs_on(fleet.catalog / "logs" / f"h.{identity}.ding.log", passes=3)
        rounds.assert_each_once()
        assert_each_once_on_screen(fleet, rounds)
        after = fleet.st2("doctor").stdout
        assert "ding-service-unresponsive" not in after, after
        assert after.count(f"ding-serves-itself") == len(SEATS), after
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")


def test_a_stub_restarted_while_the_service_is_stopped_kills_it_and_is_served_by_a_fresh_one(fleet):
    standins = standin_seats(fleet, SEATS, RESTARTS)
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    supervisor = fleet.up("--interval", "1s")
    try:
        stubs, service = serve_all(fleet)
        for identity in ("bob", "cat"):                  # their heartbeats cannot act first
            os.killpg(stubs[identity], signal.SIGSTOP)
        os.killpg(service, signal.SIGSTOP)
        os.killpg(stubs["ann"], signal.SIGKILL)
        poll_for(lambda: ding_pids(fleet).get("ann") not in (None, stubs["ann"]), timeout=30,
                 what="the supervisor's restart of ann's stub")
        restarted = ding_pids(fleet)["ann"]
        # Its registration unanswered for the bound, the restarted stub kills the stopped service and
        # registers with the fresh one it starts through the seat host.
        poll_for(lambda: "ann" in served(fleet), timeout=service_wire.HEARTBEAT_BOUND_SECONDS + 40,
                 what="ann's restarted stub served by a fresh DING service")
        fresh = hello(service_wire.socket_path(fleet.scope.directory))["pid"]
        assert fresh != service and not exists(service)
        assert served(fleet) == {"ann": restarted}
        assert (f"the DING service (pid {service}) left this seat's registration unanswered for 10s (stopped); "
                f"SIGKILLing its process group {service} so its seat locks free") in ding_log(fleet, "ann")
        assert "SERVING" not in ding_log(fleet, "ann")
        for identity in ("bob", "cat"):
            os.killpg(stubs[identity], signal.SIGCONT)
        for identity in ("bob", "cat"):
            poll_for(lambda: f"SERVING h.{identity} MYSELF" in ding_log(fleet, identity), timeout=30,
                     what=f"{identity}'s stub to serve its seat itself")
            assert (f"the DING service (pid {service}) {KILLED}{restarted}; SERVING h.{identity} MYSELF"
                    in ding_log(fleet, identity))
        rounds = Rounds(fleet, standins)
        rounds.post(0)
        rounds.wait_all()
        for identity in SEATS:
            runs_on(fleet.catalog / "logs" / f"h.{identity}.ding.log", passes=3)
        rounds.assert_each_once()
        assert_each_once_on_screen(fleet, rounds)
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
