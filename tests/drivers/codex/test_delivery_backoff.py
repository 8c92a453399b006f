"""A turn request Codex refuses is a negative receipt that authorizes one retry — after
REJECTION_BACKOFF_SECONDS, so a refusing app-server cannot spin the pump (in process, FakeClock)."""

from __future__ import annotations

from codex_support import offline_session, write_message

from st2.drivers.codex.session import REJECTION_BACKOFF_SECONDS


def turn_requests(session) -> list:
    return [entry for entry in session.connection.frames if entry[0] in ("turn/start", "turn/steer")]


def test_a_refused_turn_request_is_retried_once_after_its_backoff(catalog, tmp_path) -> None:
    session = offline_session(catalog, tmp_path)
    session.purposes[session.connection.request("thread/start", {})] = "thread/start"
    session.on_frame({"id": session.connection.next_id,
                      "result": {"thread": {"id": "thread-1", "status": {"type": "idle"}}}})
    assert session.control.thread_id == "thread-1"
    name = write_message(session.seat.directory, "refused")
    session.deliver()
    assert len(turn_requests(session)) == 1
    request_id = session.connection.next_id
    session.on_frame({"id": request_id, "error": {"code": -32600, "message": "no"}})
    assert session.pump.ledger.get(name).negative.value == "rejected"
    for _ in range(5):                       # watch wake-ups and ticks inside the backoff: no retry
        session.inbox_dirty = True
        session.deliver()
    assert len(turn_requests(session)) == 1
    session.clock.advance(REJECTION_BACKOFF_SECONDS)
    session.inbox_dirty = True
    session.deliver()
    assert len(turn_requests(session)) == 2  # exactly one retry, with a fresh correlation
    assert session.pump.ledger.get(name).negative is None
