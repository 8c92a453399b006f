"""The Codex control state (docs/drivers.md §Control state): the projection enumerated against states built by
the transition function from real frame shapes, the persisted record and its production reader,
and the session's state writer losing sight of a thread that projects to unknown."""

from __future__ import annotations

import json
import os
import stat

import pytest

from st2.drivers.codex import control as C
from st2.drivers.codex import server_requests
from st2.drivers.codex.control import ControlState, Event, Phase, project, transition

ACTIVE = {"type": "active", "activeFlags": []}


def run(*events) -> ControlState:
    state = transition(ControlState(), Event.BOUND, "thread-1")
    for event in events:
        state = transition(state, *event) if isinstance(event, tuple) else transition(state, event)
    return state


CASES = [
    # (name, events, phase, projection (state, blockedOn, ask) or None / "unknown")
    ("awaiting status", [], Phase.AWAITING_STATUS, None),
    ("idle", [(Event.STATUS, {"type": "idle"})], Phase.IDLE, ("idle", "none", "none")),
    ("one live turn", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1")], Phase.ACTIVE, ("active", "none", "none")),
    ("active without turn", [(Event.STATUS, ACTIVE)], Phase.HELD, ("active", "none", "none")),
    ("conflicting turn", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), (Event.TURN_STARTED, "t2")],
     Phase.HELD, ("active", "none", "none")),
    ("compaction", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), Event.COMPACTION_STARTED],
     Phase.HELD, ("active", "none", "none")),
    ("review", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), Event.REVIEW_STARTED],
     Phase.HELD, ("active", "human", "review")),
    ("notLoaded", [(Event.STATUS, {"type": "notLoaded"})], Phase.HELD, "unknown"),
    ("systemError", [(Event.STATUS, {"type": "systemError"})], Phase.HELD, "unknown"),
    ("waitingOnApproval flag", [(Event.STATUS, {"type": "active", "activeFlags": ["waitingOnApproval"]}),
                                (Event.TURN_STARTED, "t1")], Phase.HELD, ("active", "human", "permission")),
    ("waitingOnUserInput flag", [(Event.STATUS, {"type": "active", "activeFlags": ["waitingOnUserInput"]}),
                                 (Event.TURN_STARTED, "t1")], Phase.HELD, ("active", "human", "question")),
    ("approval request", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"),
                          (Event.REQUEST_OPENED, 0, "permission")], Phase.HELD, ("active", "human", "permission")),
    ("resolved request", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), (Event.REQUEST_OPENED, 0, "question"),
                          (Event.REQUEST_RESOLVED, 0)], Phase.ACTIVE, ("active", "none", "none")),
    ("turn completed", [(Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), (Event.TURN_COMPLETED, "t1"),
                        (Event.STATUS, {"type": "idle"})], Phase.IDLE, ("idle", "none", "none")),
]


@pytest.mark.parametrize("name, events, expected_phase, expected", CASES, ids=[case[0] for case in CASES])
def test_the_projection_is_faithful_to_what_codex_reported(name, events, expected_phase, expected) -> None:
    state = run(*events)
    assert C.phase(state)[0] is expected_phase
    projection = project(state)
    if expected is None:
        assert projection is None
    elif expected == "unknown":
        assert projection is C.UNKNOWN
    else:
        assert (projection.state, projection.blocked_on, projection.ask) == expected


def test_the_table_is_not_one_answer_for_everything() -> None:
    # An oracle that mapped every row to unknown (or to active) would fail here.
    answers = {str(project(run(*events))) for _, events, _, _ in CASES}
    assert len(answers) >= 6
    assert C.phase(run((Event.STATUS, ACTIVE)))[1] == "activeWithoutTurn"
    assert C.phase(run((Event.STATUS, ACTIVE), (Event.TURN_STARTED, "a"), (Event.TURN_STARTED, "b")))[1] == "conflictingTurn"
    assert "held" not in {projection.state for projection in
                          (project(run(*events)) for _, events, _, _ in CASES) if projection is not None}


def test_the_record_is_atomic_and_owner_only(tmp_path) -> None:
    path = C.store_paths(tmp_path / "scope", "h.coder")
    store = C.ControlStore(path, tmp_path / "scope" / "staging", "h.coder", "h.coder", "token-1")
    state = run((Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), (Event.REQUEST_OPENED, 7, "permission"))
    assert store.save(state, 1_788_000_000_000) is True
    assert store.save(state, 1_788_000_000_500) is False  # unchanged: no write
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600 and os.listdir(tmp_path / "scope" / "staging") == []
    assert path.read_text() == (
        '{"schema":"st2.codex-control-state.v1","agent":"h.coder","runtimeId":"h.coder","incarnation":"token-1",'
        '"threadId":"thread-1","status":"active","activeFlags":[],"turns":["t1"],"compaction":false,"review":false,'
        '"pendingRequests":[{"id":"7","ask":"permission"}],"writtenAtMs":1788000000000}\n')


def test_every_0_171_0_server_request_method_gets_an_explicit_answer() -> None:
    schema = json.loads((__import__("pathlib").Path(__file__).parents[3] / "captures" / "codex" / "0.171.0"
                         / "schema" / "ServerRequest.json").read_text())
    methods = sorted(variant["properties"]["method"]["enum"][0] for variant in schema["oneOf"])
    assert methods == sorted(server_requests.METHODS_0_171_0)
    for method in methods:
        if method in server_requests.HUMAN_ASKS:
            for accept in (True, False):
                assert isinstance(server_requests.human_answer(method, {"questions": [{"id": "q"}]}, accept, "x"), dict)
        else:
            kind, answer = server_requests.immediate_answer(method, {})
            assert kind in ("result", "error") and answer
    assert server_requests.immediate_answer("no/such", {})[0] == "error"
    assert server_requests.human_answer("item/commandExecution/requestApproval", {}, True) == {"decision": "accept"}
    assert server_requests.human_answer("execCommandApproval", {}, False) == {
        "decision": {"denied": {"rejection": "declined by the operator"}}}


def test_a_failed_turns_system_error_still_starts_the_next_turn_but_never_steers() -> None:
    failed = run((Event.STATUS, ACTIVE), (Event.TURN_STARTED, "t1"), (Event.STATUS, {"type": "systemError"}),
                 (Event.TURN_COMPLETED, "t1"))
    assert project(failed) is C.UNKNOWN and C.startable(failed)
    assert not C.startable(run((Event.STATUS, {"type": "systemError"}), (Event.TURN_STARTED, "t1")))
    assert not C.startable(run((Event.STATUS, {"type": "notLoaded"})))
    assert C.startable(run((Event.STATUS, {"type": "idle"})))


@pytest.mark.parametrize("info, rejected", [
    ("unauthorized", True),
    ({"httpConnectionFailed": {"httpStatusCode": 401}}, True),           # what 0.171.0 yields for a 401
    ({"responseStreamConnectionFailed": {"httpStatusCode": 401}}, True),
    ({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}, False),  # what it yields for a 429
    ("usageLimitExceeded", False),
    ("rateLimitExceeded", False),
    ({"httpConnectionFailed": {"httpStatusCode": 403}}, False),
    ({"httpConnectionFailed": {"httpStatusCode": 401}, "other": {}}, False),
    (None, False),
])
def test_only_a_typed_credential_rejection_is_provider_auth(info, rejected) -> None:
    from st2.drivers.codex.diagnostics import credential_rejected

    assert credential_rejected(info) is rejected


def test_a_thread_lost_from_sight_is_no_longer_heartbeaten(catalog, tmp_path) -> None:
    # systemError projects to unknown, which is never written: the session stops vouching for
    # the state it wrote last, so the record ages to unknown instead of being kept fresh.
    from codex_support import offline_session, record

    from st2.drivers.lifecycle import HEARTBEAT_CHECK_SECONDS
    from st2.records.harness_state import HARNESS_STATE_REFRESH_MS

    session = offline_session(catalog, tmp_path)
    seat = session.seat.directory
    due = HARNESS_STATE_REFRESH_MS / 1000 + HEARTBEAT_CHECK_SECONDS
    session.purposes[session.connection.request("thread/start", {})] = "thread/start"
    session.on_frame({"id": session.connection.next_id,
                      "result": {"thread": {"id": "thread-1", "status": {"type": "idle"}}}})
    seen = record(seat, "harness-state")
    assert seen["state"] == "idle"
    session.clock.advance(due)
    session.records.tick()
    refreshed = record(seat, "harness-state")
    assert refreshed["writtenAtMs"] > seen["writtenAtMs"]         # the twin: a thread in sight is heartbeaten
    session.on_frame({"method": "thread/status/changed",
                      "params": {"threadId": "thread-1", "status": {"type": "systemError"}}})
    assert record(seat, "harness-state") == refreshed             # unknown is never written
    for _ in range(3):
        session.clock.advance(due)
        session.records.tick()
    assert record(seat, "harness-state") == refreshed             # and never re-stamped
