"""Budget-held delivery end to end (docs/accounts.md §Budget-held delivery): a real `st2 up` with
two DING shell seats on two accounts whose usage snapshots both read PAUSE. Only the account that
says ``hold-on-pause`` holds: its seat's mail stays unread and no notice is typed, through a
SIGKILL of the supervisor and of the notifier, while the other account's seat hears its mail at
once; when the held account's snapshot is rewritten to a reset window, every held message is
noticed once, in send order."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import pytest

from ding_support import STANDIN, poll_for, runs_on, typed_notice, write_message
from st2.ding.notice import PASTE_END, PASTE_START
from st2.runtime import layout
from st2.supervisor import supervisor_record
from supervisor_support import Fleet

pytestmark = pytest.mark.process


@pytest.fixture
def fleet():
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="st2bh-"))
    group = Fleet(base)
    yield group
    group.cleanup()
    shutil.rmtree(base, ignore_errors=True)


def usage(path: Path, used: str, resets_in: int) -> None:
    now = int(time.time())
    temporary = path.with_suffix(".tmp")
    temporary.write_text(f"five_hour_used_pct={used}\nfive_hour_resets_at={now + resets_in}\nupdated_at={now}\n")
    os.replace(temporary, path)


def standin_seat(fleet: Fleet, identity: str, account: str) -> tuple[Path, Path]:
    logs = fleet.base / f"tui-{identity}"
    logs.mkdir()
    argv = " ".join(f'"{word}"' for word in (sys.executable, str(STANDIN), "--bytes", str(logs / "bytes"),
                                             "--events", str(logs / "events")))
    seat = fleet.seat(identity, f'    argv {argv}\n    ding\n    account "{account}"\n'
                                f'    restart {{\n        attempts 50\n    }}')
    (seat / "resources" / "inbox").mkdir(parents=True)
    return seat, logs


def submitted(logs: Path) -> list[str]:
    events = logs / "events"
    if not events.exists():
        return []
    return [line.split("\t", 1)[1] for line in events.read_text().splitlines() if line.startswith("submit")]


def test_a_paused_hold_on_pause_account_holds_its_seats_mail_through_kills_and_delivers_it_once_after_the_reset(fleet):
    held_usage, free_usage = fleet.base / "held.txt", fleet.base / "free.txt"
    usage(held_usage, "91", 3600)
    usage(free_usage, "91", 3600)   # PAUSE too, but its account does not hold
    (fleet.catalog / "catalog.kdl").write_text(f'''catalog {{
    account "held" {{
        DELEGATION_KIT_USAGE_FILE "{held_usage}"
        hold-on-pause #true
    }}
    account "free" {{
        DELEGATION_KIT_USAGE_FILE "{free_usage}"
    }}
}}
''')
    held_seat, held_logs = standin_seat(fleet, "a", "held")
    free_seat, free_logs = standin_seat(fleet, "b", "free")
    fleet.env["ST2_DING_TRACE_PROGRESS"] = "1"
    ding_log = fleet.catalog / "logs" / "h.a.ding.log"
    supervisor = fleet.up("--interval", "1s")
    try:
        def ding_pid(seat: str):
            record = fleet.running().get(f"h.{seat}.ding")
            return record[0] if record else None

        poll_for(lambda: all(ding_pid(seat) and f"h.{seat}" in fleet.running() for seat in "ab"), timeout=30,
                 what=lambda: f"both seats and notifiers\n{fleet.log()}")
        for seat in "ab":
            poll_for(lambda: (fleet.scope.directory / "ding" / f"h.{seat}.json").exists(), timeout=20,
                     what=f"h.{seat}'s ownership record")
        assert fleet.record("h.a").account == "held" and fleet.record("h.b").account == "free"
        assert Path(layout.account_budget(str(fleet.scope.directory), "held")).exists(), fleet.log()

        subjects = ["first", "second", "third"]
        names = [write_message(held_seat, subjects[0])]
        free_name = write_message(free_seat, "for b")
        names.append(write_message(held_seat, subjects[1]))
        # Without hold-on-pause a PAUSEd account holds nothing: b hears its mail.
        poll_for(lambda: submitted(free_logs), timeout=30, what="b's notice")
        assert submitted(free_logs) == [repr(typed_notice(free_name, "for b", "h.planner"))]
        runs_on(ding_log, passes=3, what="a's notifier, held")
        assert submitted(held_logs) == []
        assert sorted(os.listdir(held_seat / "resources" / "inbox")) == sorted(names)   # unread
        assert '"head":null' in (fleet.scope.directory / "ding" / "h.a.json").read_text().replace(" ", "")  # unowned

        # SIGKILL the supervisor and a's notifier (by the PIDs their records name) during the hold.
        os.kill(supervisor_record.read(fleet.scope).pid, signal.SIGKILL)
        supervisor.wait(timeout=10)
        victim = ding_pid("a")
        os.killpg(victim, signal.SIGKILL)
        names.append(write_message(held_seat, subjects[2]))
        supervisor = fleet.up("--interval", "1s")
        poll_for(lambda: ding_pid("a") not in (None, victim), timeout=30,
                 what=lambda: f"the new supervisor's restart of a's notifier\n{fleet.log()}")
        runs_on(ding_log, passes=3, what="a's restarted notifier, held")
        assert submitted(held_logs) == []
        assert sorted(os.listdir(held_seat / "resources" / "inbox")) == sorted(names)

        usage(held_usage, "3", 18000)   # the window reset: the hold lifts with no seat record written
        poll_for(lambda: len(submitted(held_logs)) >= len(names), timeout=40, what="every held notice")
        runs_on(ding_log, passes=3, what="a's notifier after the lift")   # anything extra would show now
        notices = [typed_notice(name, subject, "h.planner") for name, subject in zip(names, subjects)]
        assert submitted(held_logs) == [repr(notice) for notice in notices]
        received = (held_logs / "bytes").read_bytes()
        for notice in notices:
            assert received.count((PASTE_START + notice + PASTE_END).encode()) == 1
        assert submitted(free_logs) == [repr(typed_notice(free_name, "for b", "h.planner"))]

        def lifted():
            found = fleet.st2("events", "--json")
            events = [json.loads(line) for line in found.stdout.splitlines() if line.strip()]
            return [event for event in events if event["kind"] == "hold" and event["seat"] == "h.a"
                    and event["to"] is None]
        [lift] = poll_for(lifted, timeout=30, what="the fleet event of the lifted hold")
        assert (lift["from"], lift["evidence"]) == ("budget", {"account": "held", "axis": None, "until": None})
    finally:
        fleet.stop(supervisor)
        fleet.st2("down")
