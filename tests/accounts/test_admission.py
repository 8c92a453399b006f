"""Admission of starts per account (st2.accounts.admission): the sliding window, its durability
across a restarted supervisor, the fail-safe reading of a malformed record, the FIFO queue, the
head of the queue for an explicit start. The pass's side (only a seat's agent task on an account
is asked; seats without one are never queued) is tests/supervisor/test_admission_pass.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from st2.accounts import admission
from st2.accounts.admission import Admission, Decision
from st2.base.clock import FakeClock
from st2.declarations.accounts import Account
from st2.runtime import layout


def account(spacing: float = 3.0, concurrency: int = 1, name: str = "main") -> Account:
    return Account(name=name, config_dirs={}, knobs={}, spacing_seconds=spacing, concurrency=concurrency)


@pytest.fixture
def scope(tmp_path: Path) -> Path:
    directory = tmp_path / "scope"
    directory.mkdir()
    return directory


def one_pass(gate: Admission, main: Account, runtime_ids, explicit=()) -> dict[str, Decision]:
    gate.begin_pass()
    decisions = {rid: gate.admit(main, rid, explicit=rid in explicit) for rid in runtime_ids}
    gate.end_pass()
    return decisions


def record(scope: Path, name: str = "main") -> dict:
    return json.loads(Path(layout.account_admission(scope, name)).read_text())


def test_concurrency_one_admits_one_start_per_spacing(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=3.0)
    first = one_pass(gate, main, ["h.a", "h.b"])
    assert first["h.a"] == Decision(True)
    assert first["h.b"] == Decision(False, 1, clock.monotonic() + 3.0)
    clock.advance(2.999)
    assert not one_pass(gate, main, ["h.b"])["h.b"].admitted   # 1 ms short of the spacing
    clock.advance(0.001)
    assert one_pass(gate, main, ["h.b"])["h.b"].admitted


def test_concurrency_two_is_a_sliding_window_not_a_batch(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=10.0, concurrency=2)
    assert one_pass(gate, main, ["h.a"])["h.a"].admitted
    clock.advance(4)
    assert one_pass(gate, main, ["h.b"])["h.b"].admitted
    clock.advance(1)
    waiting = one_pass(gate, main, ["h.c", "h.d"])
    # h.c may start when h.a's start leaves the window (t=10), h.d when h.b's does (t=14).
    assert waiting["h.c"].next_slot == 1010.0 and waiting["h.d"].next_slot == 1014.0
    clock.advance(5)   # t=10
    now = one_pass(gate, main, ["h.c", "h.d"])
    assert now["h.c"].admitted and not now["h.d"].admitted


def test_a_start_is_durable_a_restarted_supervisor_waits_out_the_spacing(scope: Path, clock: FakeClock) -> None:
    main = account(spacing=3.0)
    assert one_pass(Admission(scope, clock, boot_id="b"), main, ["h.a"])["h.a"].admitted
    clock.advance(1)
    restarted = Admission(scope, clock, boot_id="b")   # SIGKILLed and started again, same boot
    decision = one_pass(restarted, main, ["h.b"])["h.b"]
    assert not decision.admitted and decision.next_slot == pytest.approx(clock.monotonic() + 2.0)
    clock.advance(2)
    assert one_pass(Admission(scope, clock, boot_id="b"), main, ["h.b"])["h.b"].admitted


def test_another_boots_start_is_reckoned_by_wall_age_and_a_future_stamp_reads_as_now(scope: Path) -> None:
    main = account(spacing=3.0)
    earlier = FakeClock(monotonic=5000.0)
    assert one_pass(Admission(scope, earlier, boot_id="old"), main, ["h.a"])["h.a"].admitted
    after_boot = FakeClock(wall_ms=earlier.wall_ms() + 1000, monotonic=7.0)   # monotonic restarted
    assert not one_pass(Admission(scope, after_boot, boot_id="new"), main, ["h.b"])["h.b"].admitted
    after_boot.advance(2)
    assert one_pass(Admission(scope, after_boot, boot_id="new"), main, ["h.b"])["h.b"].admitted
    stepped_back = FakeClock(wall_ms=earlier.wall_ms() - 3_600_000, monotonic=8.0)   # the wall clock stepped back
    # The start an hour "ahead" reads as one just now: one spacing to wait, not an hour.
    assert one_pass(Admission(scope, stepped_back, boot_id="other"), main, ["h.c"])["h.c"] == Decision(False, 1, 11.0)


def test_a_start_counts_from_when_its_launch_returned(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=3.0)
    gate.begin_pass()
    assert gate.admit(main, "h.a").admitted
    clock.advance(0.5)                                       # the launch took half a second
    gate.launched("h.a")
    assert gate.admit(main, "h.b") == Decision(False, 1, clock.monotonic() + 3.0)
    gate.end_pass()
    clock.advance(2.9)
    assert not one_pass(gate, main, ["h.b"])["h.b"].admitted   # 3.4 s after admission, 2.9 s after the launch


def test_a_start_whose_launch_was_in_progress_reads_as_one_just_now(scope: Path, clock: FakeClock) -> None:
    main = account(spacing=3.0)
    dying = Admission(scope, clock, boot_id="b")
    dying.begin_pass()
    assert dying.admit(main, "h.a").admitted                 # published durably, pending
    assert record(scope)["starts"][0]["launched"] is False
    clock.advance(10)                                        # SIGKILLed mid-launch; restarted later
    restarted = Admission(scope, clock, boot_id="b")
    assert one_pass(restarted, main, ["h.b"])["h.b"] == Decision(False, 1, clock.monotonic() + 3.0)


@pytest.mark.parametrize("content", [b"{", b"[]", b'{"schema":"st2.account-admission.v1","account":"main"}',
                                     b'{"schema":"other","account":"main","spacingMs":0,"concurrency":1,'
                                     b'"bootId":"","starts":[],"queue":[]}'])
def test_a_malformed_record_reads_as_a_full_window_of_starts_now(scope: Path, clock: FakeClock, content: bytes) -> None:
    path = Path(layout.account_admission(scope, "main"))
    path.parent.mkdir()
    path.write_bytes(content)
    assert admission.read_file(scope, "main").malformed
    main = account(spacing=3.0, concurrency=2)
    gate = Admission(scope, clock, boot_id="b")
    decision = one_pass(gate, main, ["h.a"])["h.a"]
    assert decision == Decision(False, 1, clock.monotonic() + 3.0)
    clock.advance(3)
    assert one_pass(gate, main, ["h.a"])["h.a"].admitted


def test_an_absent_record_is_no_starts(scope: Path, clock: FakeClock) -> None:
    assert admission.read_file(scope, "main") is None
    assert one_pass(Admission(scope, clock, boot_id="b"), account(), ["h.a"])["h.a"].admitted


def test_the_queue_is_fifo_by_first_wait_whatever_order_a_pass_asks_in(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=1.0)
    one_pass(gate, main, ["h.z", "h.m", "h.a"])          # h.z starts; h.m then h.a wait
    clock.advance(0.5)
    one_pass(gate, main, ["h.a", "h.m", "h.b"])          # h.b joins behind them
    assert [entry["runtimeId"] for entry in record(scope)["queue"]] == ["h.m", "h.a", "h.b"]
    started = []
    for _ in range(3):
        clock.advance(1.0)
        decisions = one_pass(gate, main, [rid for rid in ("h.b", "h.a", "h.m") if rid not in started])
        started += [rid for rid, decision in decisions.items() if decision.admitted]
    assert started == ["h.m", "h.a", "h.b"]
    assert record(scope)["queue"] == []


def test_the_queue_order_survives_a_restart(scope: Path, clock: FakeClock) -> None:
    main = account(spacing=1.0)
    one_pass(Admission(scope, clock, boot_id="b"), main, ["h.a", "h.c", "h.b"])
    clock.advance(1.0)
    restarted = Admission(scope, clock, boot_id="b")
    decisions = one_pass(restarted, main, ["h.b", "h.c"])
    # h.b was asked first, behind h.c (which starts now): second in line, one spacing away.
    assert decisions["h.c"].admitted and decisions["h.b"] == Decision(False, 2, clock.monotonic() + 1.0)


def test_the_record_shows_the_queue_with_when_each_waited_and_starts(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=2.0)
    start_ms = clock.wall_ms()
    one_pass(gate, main, ["h.a", "h.b", "h.c"])
    assert Path(layout.account_admission(scope, "main")).read_text() == (
        '{"schema":"st2.account-admission.v1","account":"main","spacingMs":2000,"concurrency":1,"bootId":"b",'
        f'"starts":[{{"runtimeId":"h.a","atMs":{start_ms},"monotonic":1000.0,"launched":true}}],'
        f'"queue":[{{"runtimeId":"h.b","waitingSinceMs":{start_ms},"startsAtMs":{start_ms + 2000},"explicit":false}},'
        f'{{"runtimeId":"h.c","waitingSinceMs":{start_ms},"startsAtMs":{start_ms + 4000},"explicit":false}}]}}\n')
    read = admission.read_file(scope, "main")
    assert (read.position("h.b"), read.position("h.c"), read.position("h.a")) == (1, 2, None)


def test_an_explicit_start_goes_to_the_head_and_still_keeps_the_spacing(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=3.0)
    one_pass(gate, main, ["h.a", "h.b", "h.c"])                # h.a started; h.b, h.c wait
    clock.advance(1)
    decisions = one_pass(gate, main, ["h.b", "h.c", "h.x"], explicit={"h.x"})
    assert decisions["h.x"] == Decision(False, 1, clock.monotonic() + 2.0)   # the head, not now
    clock.advance(2)
    decisions = one_pass(gate, main, ["h.b", "h.c", "h.x"])
    assert [rid for rid, decision in decisions.items() if decision.admitted] == ["h.x"]
    assert [entry["runtimeId"] for entry in record(scope)["queue"]] == ["h.b", "h.c"]


def test_a_seat_no_longer_asked_leaves_the_queue(scope: Path, clock: FakeClock) -> None:
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=3.0)
    one_pass(gate, main, ["h.a", "h.b", "h.c"])
    one_pass(gate, main, ["h.c"])                            # h.b came up another way, or stopped
    assert [entry["runtimeId"] for entry in record(scope)["queue"]] == ["h.c"]


def test_end_pass_wakes_the_loop_at_the_earliest_slot_of_any_account(scope: Path, clock: FakeClock) -> None:
    gate = Admission(scope, clock, boot_id="b")
    main, spare = account(spacing=3.0), account(spacing=1.0, name="spare")
    gate.begin_pass()
    for rid in ("h.a", "h.b"):
        gate.admit(main, rid)
    for rid in ("h.c", "h.d"):
        gate.admit(spare, rid)
    assert gate.end_pass() == clock.monotonic() + 1.0
    gate.begin_pass()
    assert gate.end_pass() is None                           # nothing asked: nothing waits



class TickingClock(FakeClock):
    """A clock that moves on at every reading, as a real one does between two calls."""

    def monotonic(self) -> float:
        self.advance(0.000001)
        return super().monotonic()


def test_a_seat_whose_slot_has_come_is_ready_on_a_clock_that_moves_between_readings(scope: Path) -> None:
    """The drain sleeps until next_slot() and asks ready(): the slot that came must read ready
    even though the clock moved on while the slots were reckoned."""
    clock = TickingClock()
    gate, main = Admission(scope, clock, boot_id="b"), account(spacing=0.25)
    gate.begin_pass()
    assert [gate.admit(main, rid).admitted for rid in ("h.a", "h.b", "h.c")] == [True, False, False]
    gate.launched("h.a")
    clock.advance(gate.next_slot() - clock.monotonic())
    assert gate.ready() == ["h.b"]
