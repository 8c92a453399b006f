"""The fleet view's detail pane names how the seat's current harness session began (issue 24)."""

from __future__ import annotations

from st2.runtime.resumable_session import Lost, SessionRecord
from st2.top.actions import session_text


def session(start: str, session_id: str | None, *lost: str) -> SessionRecord:
    return SessionRecord(runtime_id="h.a", agent="h.a", harness="claude", incarnation="t", start=start,
                         session_id=session_id, lost=tuple(Lost(lost_id, "t0", 1) for lost_id in lost))


def test_the_session_line_names_the_start_the_id_and_what_was_lost() -> None:
    assert session_text(None) == "no resumable-session record on this host"
    assert session_text(session("resumed", "S1")) == "resumed S1"
    assert session_text(session("fallback", None, "S0")) == (
        "fallback (id not yet observed) (lost: S0)")
