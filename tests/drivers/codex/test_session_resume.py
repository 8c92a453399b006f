"""The Codex wrapper resumes only a thread id of Codex's shape (a UUID, st2/drivers/session_ids.py),
and only its own seat's record: anything else in the resumable-session record starts a fresh
thread, never reaching ``thread/resume`` (real wrapper, stand-in app-server)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from codex_support import HOST, Wrapper, make_seat, poll_for, record

from st2.runtime import resumable_session

pytestmark = pytest.mark.process

THREAD = "01a22a0d-4978-7472-b462-740ce61e24f6"  # the stand-in's thread


def store(catalog: Path, tmp_path: Path) -> resumable_session.SessionStore:
    return resumable_session.SessionStore.of(catalog, HOST, tmp_path / "state" / "st2")


@pytest.mark.parametrize("session_id, agent", [("--dangerously-bypass-approvals-and-sandbox", f"{HOST}.coder"),
                                               ("../../thread", f"{HOST}.coder"), (THREAD, f"{HOST}.other")],
                         ids=["option", "path", "another-seat"])
def test_a_recorded_thread_that_is_not_this_seats_codex_thread_starts_fresh(catalog, tmp_path, session_id,
                                                                             agent) -> None:
    seat = make_seat(catalog)
    sessions = store(catalog, tmp_path)
    sessions.ensure()
    sessions.record(f"{HOST}.coder").write_bytes(resumable_session.SessionRecord(
        runtime_id=f"{HOST}.coder", agent=agent, harness="codex", incarnation="before", start="fresh",
        session_id=session_id).to_json())
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        current = poll_for(lambda: (lambda value: value if value.get("sessionId") == THREAD else None)(
            json.loads(sessions.record(f"{HOST}.coder").read_text())), "the started thread recorded")
    finally:
        wrapper.stop()
    # Never asked to resume: a thread/resume of the id would have been refused, a fallback with it lost.
    assert (current["agent"], current["start"], current["resumedFrom"], current["lost"]) == (
        f"{HOST}.coder", "fresh", None, [])
