"""The opencode wrapper resumes only a session id of opencode's shape (``ses_`` and base62,
st2/drivers/session_ids.py) from its own seat's record: anything else starts a new session and is
never asked of the server nor kept as a lost conversation (real wrapper, stand-in server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opencode_support import HOST, Wrapper, make_seat, poll_for, record

from st2.runtime import resumable_session

pytestmark = pytest.mark.process


@pytest.mark.parametrize("session_id, agent", [("ses_../../config", f"{HOST}.oc"), ("--port=1", f"{HOST}.oc"),
                                               ("ses_dd761d587ffeD73MSIa931GXoj", f"{HOST}.other")],
                         ids=["path", "option", "another-seat"])
def test_a_recorded_session_that_is_not_this_seats_opencode_session_starts_a_new_one(catalog, tmp_path, session_id,
                                                                                    agent) -> None:
    seat = make_seat(catalog)
    sessions = resumable_session.SessionStore.of(catalog, HOST, tmp_path / "state" / "st2")
    sessions.ensure()
    sessions.record(f"{HOST}.oc").write_bytes(resumable_session.SessionRecord(
        runtime_id=f"{HOST}.oc", agent=agent, harness="opencode", incarnation="before", start="fresh",
        session_id=session_id).to_json())
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        current = poll_for(lambda: (lambda value: value if value.get("sessionId") not in (None, session_id) else None)(
            json.loads(sessions.record(f"{HOST}.oc").read_text())), lambda: wrapper.text())
    finally:
        wrapper.stop()
    assert current["sessionId"].startswith("ses_")
    assert (current["agent"], current["start"], current["resumedFrom"], current["lost"]) == (
        f"{HOST}.oc", "fresh", None, [])
