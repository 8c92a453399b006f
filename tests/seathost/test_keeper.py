"""The seat host's keep registrations (st2/seathost/keeper.py): the anchored wrapper's presence
refresh and observed-state heartbeat, on the session's schedule, fenced by its incarnation."""

from __future__ import annotations

from support import make_seat, record

from st2.records import harness_state
from st2.seathost.keeper import Keeper, request

FIVE_MINUTES = 300.0


def claimed(seat, clock, token: str) -> int:
    seq = harness_state.claim(seat.directory, seat.agent, "claude", token, clock)
    harness_state.Writer(seat.directory, seat.agent, "claude", clock, pty_session=seat.agent, incarnation=token,
                         claimed_seq=seq).observe(harness_state.IDLE)
    return seq


def keep(keeper: Keeper, seat, token: str, seq: int, key: int = 7, due: float = FIVE_MINUTES) -> None:
    assert keeper.register(key, request(seat.directory, seat.agent, "claude", seat.agent, token, seq, FIVE_MINUTES,
                                        due), 4242)


def presence(seat):
    path = seat.directory / "status"
    return path.read_text() if path.exists() else None


def test_the_request_is_pinned() -> None:
    from pathlib import Path

    assert request(Path("/c/agents/h/w"), "h.w", "claude", "h.w", "t-1", 3, 300.0, 12.5) == {
        "op": "keep", "seat": "/c/agents/h/w", "agent": "h.w", "harness": "claude", "runtimeId": "h.w",
        "incarnation": "t-1", "claimedSeq": 3, "refreshSeconds": 300.0, "dueInSeconds": 12.5}


def test_the_session_is_kept_on_its_schedule(catalog, clock) -> None:
    seat = make_seat(catalog)
    seq = claimed(seat, clock, "mine")
    keeper = Keeper(clock, lambda line: None)
    keep(keeper, seat, "mine", seq, due=60.0)
    written = record(seat, "harness-state")["writtenAtMs"]
    clock.advance(59.0)
    keeper.run_due()
    assert presence(seat) is None and keeper.seconds_until_due() == 1.0
    clock.advance(1.0)
    keeper.run_due()
    assert presence(seat) == f"available\nv1 {clock.wall_ms()}\n"
    clock.advance(FIVE_MINUTES)
    keeper.run_due()
    assert presence(seat) == f"available\nv1 {clock.wall_ms()}\n"
    assert record(seat, "harness-state")["writtenAtMs"] == clock.wall_ms() != written
    assert keeper.summary() == [{"pid": 4242, "refreshes": 2}]
    keeper.unregister(7)
    assert keeper.seconds_until_due() is None and keeper.summary() == []


def test_another_incarnations_record_is_never_restamped_nor_its_presence_refreshed(catalog, clock) -> None:
    seat = make_seat(catalog)
    claimed(seat, clock, "old")
    seq = claimed(seat, clock, "new")   # a newer wrapper claimed the seat after the old registration
    before = (seat.directory / "harness-state").read_bytes()
    keeper = Keeper(clock, lambda line: None)
    keep(keeper, seat, "old", seq - 1, due=0.0)
    for _ in range(3):
        clock.advance(FIVE_MINUTES + 1)
        keeper.run_due()
    assert (seat.directory / "harness-state").read_bytes() == before
    assert presence(seat) is None and keeper.summary() == [{"pid": 4242, "refreshes": 0}]


def test_a_terminal_record_is_never_restamped_nor_its_presence_refreshed(catalog, clock) -> None:
    seat = make_seat(catalog)
    seq = claimed(seat, clock, "mine")
    harness_state.Writer(seat.directory, seat.agent, "claude", clock, pty_session=seat.agent, incarnation="mine",
                         claimed_seq=seq).ended("exit 0")
    before = (seat.directory / "harness-state").read_bytes()
    keeper = Keeper(clock, lambda line: None)
    keep(keeper, seat, "mine", seq, due=0.0)
    clock.advance(FIVE_MINUTES + 1)
    keeper.run_due()
    assert (seat.directory / "harness-state").read_bytes() == before and presence(seat) is None


def test_the_claim_alone_counts_as_live(catalog, clock) -> None:
    seat = make_seat(catalog)
    token = "mine"
    seq = harness_state.claim(seat.directory, seat.agent, "claude", token, clock)   # no hook has written yet
    keeper = Keeper(clock, lambda line: None)
    keep(keeper, seat, token, seq, due=0.0)
    keeper.run_due()
    assert presence(seat) == f"available\nv1 {clock.wall_ms()}\n"


def test_a_malformed_request_is_refused_and_one_failing_seat_never_stops_another(catalog, clock, tmp_path) -> None:
    seat = make_seat(catalog)
    seq = claimed(seat, clock, "mine")
    lines: list[str] = []
    keeper = Keeper(clock, lines.append)
    body = request(seat.directory, seat.agent, "claude", seat.agent, "mine", seq, FIVE_MINUTES, 0.0)
    for field, value in (("seat", "relative/path"), ("claimedSeq", -1), ("claimedSeq", True),
                         ("refreshSeconds", 0), ("dueInSeconds", "soon"), ("incarnation", "")):
        assert not keeper.register(1, {**body, field: value}, None), field
    (tmp_path / "not-a-directory").write_text("")
    assert keeper.register(1, {**body, "seat": str(tmp_path / "not-a-directory")}, None)
    keep(keeper, seat, "mine", seq, key=2, due=0.0)
    keeper.run_due()
    assert presence(seat) == f"available\nv1 {clock.wall_ms()}\n"
    assert len(lines) == 2 and all(str(tmp_path / "not-a-directory") in line for line in lines)
