"""What the DING fleet process proofs share: a few stand-in-TUI seats with DING under a real
``st2 up``, their tasks' PIDs, rounds of mail to every seat, a SIGKILL of one seat's DING task
followed by the supervisor's restart, and the exactly-once check over what each stand-in saw.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from ding_support import STANDIN, poll_for, typed_notice, write_message
from st2.ding.notice import PASTE_END, PASTE_START

SEATS = ("ann", "bob", "cat")


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])


def exists(pid: int) -> bool:
    """Whether ``pid`` runs (not a zombie). A process can end between the look and the read, which
    then fails with ESRCH: that is gone too."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] not in ("Z", "X")
    except OSError:
        return False


def ding_pids(fleet, seats=SEATS) -> dict[str, int]:
    running = fleet.running()
    return {identity: running[f"h.{identity}.ding"][0] for identity in seats if f"h.{identity}.ding" in running}


def standin_seats(fleet, identities, extra: str = "") -> dict[str, Path]:
    """A stand-in-TUI seat with DING per identity; the directory of each one's stand-in logs."""
    standins = {}
    for identity in identities:
        logs = fleet.base / f"standin-{identity}"
        logs.mkdir()
        standins[identity] = logs
        argv = " ".join(f'"{word}"' for word in (sys.executable, str(STANDIN), "--bytes", str(logs / "bytes"),
                                                 "--events", str(logs / "events")))
        seat = fleet.seat(identity, f"    argv {argv}\n    ding{extra}")
        (seat / "resources" / "inbox").mkdir(parents=True)
    return standins


RESTARTS = "\n    restart {\n        attempts 50\n    }"
"""A declaration tail that lets the supervisor restart a killed DING task as often as a proof kills it."""


class Rounds:
    """Rounds of one message per seat, and the notices each seat must see exactly once."""

    def __init__(self, fleet, standins: dict[str, Path]) -> None:
        self.fleet = fleet
        self.standins = standins
        self.notices: dict[str, list[str]] = {identity: [] for identity in standins}

    def post(self, round_number: int) -> None:
        for identity in self.standins:
            subject = f"round {round_number} for {identity}"
            seat = self.fleet.catalog / "agents" / "h" / identity
            self.notices[identity].append(typed_notice(write_message(seat, subject), subject, "h.planner"))

    def submitted(self, identity: str) -> list[str]:
        events = self.standins[identity] / "events"
        text = events.read_text() if events.exists() else ""
        return [line.split("\t", 1)[1] for line in text.splitlines() if line.startswith("submit")]

    def wait_all(self, what: str = "every notice") -> None:
        for identity in self.standins:
            poll_for(lambda: len(self.submitted(identity)) >= len(self.notices[identity]), timeout=60,
                     what=f"{what} of {identity}")

    def assert_each_once(self) -> None:
        """Every notice submitted once, in order, and its paste frame received once."""
        for identity, logs in self.standins.items():
            assert self.submitted(identity) == [repr(notice) for notice in self.notices[identity]], identity
            received = (logs / "bytes").read_bytes()
            for notice in self.notices[identity]:
                assert received.count((PASTE_START + notice + PASTE_END).encode()) == 1, (identity, notice)


def kill_and_restart(fleet, identity: str, what: str = "DING task") -> None:
    """SIGKILL ``identity``'s DING task's group, wait for the supervisor's restart, and check no
    other seat's DING task changed."""
    victim = ding_pids(fleet)[identity]
    others = {name: pid for name, pid in ding_pids(fleet).items() if name != identity}
    os.killpg(victim, signal.SIGKILL)
    poll_for(lambda: ding_pids(fleet).get(identity) not in (None, victim), timeout=30,
             what=f"the supervisor's restart of {identity}'s {what}")
    # One seat's delivery dying stopped no other seat's.
    assert {name: pid for name, pid in ding_pids(fleet).items() if name != identity} == others


def hello(path: Path) -> dict | None:
    """The ``hello`` answer on a seat host or DING service socket; None when none answers."""
    from st2.seathost import wire

    try:
        return wire.request(path, {"op": "hello"}, timeout=2.0)
    except OSError:
        return None


def served(fleet) -> dict[str, int]:
    """target identity -> stub pid of every seat the DING service serves with a live shared watch."""
    from st2.ding import service_wire

    answer = hello(service_wire.socket_path(fleet.scope.directory)) or {}
    return {row["target"].split(".", 1)[1]: row["stub"] for row in answer.get("serving", ()) if row["watch"]}


def ding_fleet(prefix: str):
    """A fixture body: a temp :class:`Fleet`, and afterwards every task it recorded killed and the
    scope's seat host and DING service SIGKILLed (each by the PID its own socket names; a stopped
    one dies too)."""
    import shutil
    import tempfile

    from st2.ding import service_wire
    from st2.seathost import wire
    from supervisor_support import Fleet

    base = Path(tempfile.mkdtemp(dir="/tmp", prefix=prefix))
    group = Fleet(base)
    yield group
    group.cleanup()
    for path in (service_wire.socket_path(group.scope.directory), wire.socket_path(group.scope.directory)):
        answer = hello(path)
        if answer is not None:
            os.kill(answer["pid"], signal.SIGKILL)
    shutil.rmtree(base, ignore_errors=True)


def pane_screen(fleet, identity: str) -> str:
    """What the seat's tmux pane shows now, wrapped lines joined. (Not its scrolled history: the
    stand-in redraws its whole transcript on each change, so the history holds earlier frames.)"""
    import subprocess

    socket = fleet.record(f"h.{identity}").socket
    return subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-J"],
                          capture_output=True, text=True, timeout=10, check=True).stdout
