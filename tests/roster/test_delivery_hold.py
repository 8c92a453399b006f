"""The seat's one delivery hold (st2.delivery.hold) as the roster and Doctor show it, through the
real `st2 agents` and `st2 doctor`: ``deliveryHold`` is appended after every existing field (each
byte-identical), "dnd" for a fresh declared dnd and null for busy, available and a dnd that aged
out; Doctor advises on the held seat only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import NOW_MS, _seat
from st2.delivery.hold import delivery_hold
from st2.records import status as status_record
from support import run_st2, st2_env

ROW = ('{{"identity":"alpha.{seat}","status":"{status}","name":null,"description":null,"retired":false,"resources":[],'
       '"desiredState":"running","desiredStateReason":null,"observedState":null,'
       '"driverDiagnostic":{{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,'
       '"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,'
       '"recovery":"publishFailureOrClearOnStageRecovery"}},"context":null,"id":"alpha.{seat}","address":"{seat}",'
       '"busAddress":"alpha.{seat}","worktree":null,"deliveryHold":{hold},"account":null,"budgetHold":null}}')


def seat_with_status(catalog: Path, identity: str, presence: str, written_at_ms: int) -> Path:
    seat = _seat(catalog, "alpha", identity, f'agent "{identity}" {{\n    argv "sh" "-c" "true"\n}}\n')
    (seat / "status").write_bytes(status_record.encode(presence, written_at_ms))
    return seat


@pytest.mark.parametrize("presence, age_ms, hold", [
    ("dnd", 1_000, "dnd"),
    ("dnd", status_record.STATUS_STALE_MS, None),   # an abandoned hold ages out
    ("busy", 1_000, None),                          # busy never holds
    ("available", 1_000, None),
])
def test_the_predicate_holds_only_on_a_fresh_dnd(tmp_path: Path, presence: str, age_ms: int, hold) -> None:
    seat = seat_with_status(tmp_path, "w", presence, NOW_MS - age_ms)
    assert delivery_hold(seat / "status", NOW_MS) == hold


@pytest.mark.process
def test_the_roster_appends_delivery_hold_and_doctor_advises_only_on_the_held_seat(catalog: Path) -> None:
    seat_with_status(catalog, "held", "dnd", NOW_MS - 1_000)
    seat_with_status(catalog, "working", "busy", NOW_MS - 1_000)
    seat_with_status(catalog, "aged", "dnd", NOW_MS - status_record.STATUS_STALE_MS)
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(NOW_MS))
    roster = run_st2("agents", "--host", "alpha", "--json", env=env)
    assert roster.returncode == 0, roster.stderr
    assert roster.stdout.strip() == "[" + ",".join([
        ROW.format(seat="aged", status="unknown", hold="null"),
        ROW.format(seat="held", status="dnd", hold='"dnd"'),
        ROW.format(seat="working", status="busy", hold="null"),
    ]) + "]"
    assert [row["deliveryHold"] for row in json.loads(roster.stdout)] == [None, "dnd", None]
    doctor = run_st2("doctor", "--host", "alpha", env=env)
    held = [line for line in doctor.stdout.splitlines() if "delivery-hold" in line]
    assert held == ["advisory: alpha.held: delivery-hold: delivery held: fresh dnd declared; new mail waits unread "
                    "and unowned until the seat leaves it or it ages out"], doctor.stdout
