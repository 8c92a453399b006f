"""The fleet view's detail pane names how the seat's current harness session began (issue 24)."""

from __future__ import annotations

from st2.top.actions import session_text


def test_the_session_line_names_the_start_the_id_and_what_was_lost() -> None:
    assert session_text(None) == "no resumable-session record on this host"
    assert session_text({"start": "resumed", "sessionId": "S1", "lostSessionIds": []}) == "resumed S1"
    assert session_text({"start": "fallback", "sessionId": None, "lostSessionIds": ["S0"]}) == (
        "fallback (id not yet observed) (lost: S0)")
