"""The session-lost rule (:func:`st2.roster.row.lost_session`), which Doctor's advisory reads: a
firing case and each non-firing one."""

from __future__ import annotations

from st2.roster.row import lost_session
from st2.runtime.resumable_session import Lost, SessionRecord


def session(start: str, *lost: str) -> SessionRecord:
    return SessionRecord(runtime_id="h.a", agent="h.a", harness="claude", incarnation="t", start=start,
                         lost=tuple(Lost(lost_id, "t0", 1) for lost_id in lost))


def test_a_fallback_that_lost_sessions_names_the_last_one_lost() -> None:
    assert lost_session(session("fallback", "S0", "S1")) == "S1"


def test_no_record_a_fallback_that_lost_nothing_and_a_resumed_session_name_none() -> None:
    assert lost_session(None) is None
    assert lost_session(session("fallback")) is None
    assert lost_session(session("resumed", "S0")) is None
