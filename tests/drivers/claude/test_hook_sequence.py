"""Hook sequences over the captured event order, through the same recorder the hook process runs:
harness-state transitions after each event, exactly one counted compaction, and the session rules
(terminal record kept, wrapperless claim, PostCompact's fallback count)."""

from __future__ import annotations

from support_claude import CAPTURES, capture, make_seat, record

from st2.drivers.claude import recording
from st2.drivers.claude.replay import entries
from st2.drivers.claude.seat import Session
from st2.records import harness_context, harness_state


def wrapper_session(seat, clock, token="wrapper-token") -> Session:
    seq = harness_state.claim(seat.directory, seat.agent, "claude", token, clock)
    return Session(token, seq, seat.agent, True)


def state_tuple(seat):
    value = record(seat, "harness-state")
    return value["state"], value["blockedOn"], value["ask"]


def test_the_2_1_197_lab_sequence_moves_state_and_counts_one_compaction(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    text = (CAPTURES / "2.1.197/hooks-sequence/_all.jsonl").read_text()
    observed = []
    for _, kind, event, payload in entries(text):
        assert kind == "hook"
        clock.advance(1)
        recording.apply_hook(seat, session, event, payload, clock)
        observed.append((event, state_tuple(seat)))
    idle, active, blocked = ("idle", "none", "none"), ("active", "none", "none"), ("active", "human", "permission")
    assert observed == [
        ("SessionStart", idle), ("UserPromptSubmit", active), ("MessageDisplay", active), ("Stop", idle),
        ("UserPromptSubmit", active), ("PreToolUse", active), ("PostToolUse", active), ("PostToolBatch", active),
        ("Stop", idle), ("MessageDisplay", idle),
        # the permission prompt: blocked from PermissionRequest, corroborated (not driven) by the
        # Notification, released by the granted call's own PostToolUse
        ("UserPromptSubmit", active), ("PreToolUse", active), ("PermissionRequest", blocked),
        ("Notification", blocked), ("PostToolUse", active), ("PostToolBatch", active), ("Stop", idle),
        ("MessageDisplay", idle),
        # a real subagent: its SubagentStart/SubagentStop carry agent_id and move nothing
        ("UserPromptSubmit", active), ("PreToolUse", active), ("SubagentStart", active), ("SubagentStop", active),
        ("PostToolUse", active), ("PostToolBatch", active), ("Stop", idle), ("MessageDisplay", idle),
        # a failing tool
        ("UserPromptSubmit", active), ("PreToolUse", active), ("PostToolUseFailure", active),
        ("PostToolBatch", active), ("Stop", idle), ("MessageDisplay", idle),
        # /compact: PreCompact, the phantom SubagentStop, SessionStart source=compact, PostCompact
        ("PreCompact", idle), ("SubagentStop", idle), ("SessionStart", idle), ("PostCompact", idle),
        ("UserPromptSubmit", active), ("Stop", idle), ("MessageDisplay", idle), ("SessionEnd", idle),
    ]
    context = record(seat, "harness-context")
    assert (context["compactions"], context["lastCompactionTrigger"]) == (1, "manual")
    assert context["incarnation"] == "wrapper-token"


def test_the_2_1_328_tui_sequence_counts_its_compaction_once(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    names = ["22-SessionStart", "23-UserPromptSubmit", "24-Stop", "25-PreCompact", "26-SubagentStop",
             "27-SessionStart", "28-PostCompact", "29-UserPromptSubmit", "30-Stop", "31-SessionEnd"]
    stamps = {}
    for name in names:
        clock.advance(2)
        payload = capture(f"2.1.328/hooks/{name}.json")
        recording.apply_hook(seat, session, payload["hook_event_name"], payload, clock)
        stamps[name] = clock.wall_ms()
    context = record(seat, "harness-context")
    assert (context["compactions"], context["lastCompactionTrigger"]) == (1, "manual")
    # PostCompact advanced lastCompactionMs from the start of the compaction to its end.
    assert context["lastCompactionMs"] == stamps["28-PostCompact"]
    assert state_tuple(seat) == ("idle", "none", "none")


def test_a_post_compact_with_no_counted_compaction_counts_it(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    recording.apply_hook(seat, session, "PostCompact", capture("2.1.328/hooks/28-PostCompact.json"), clock)
    assert record(seat, "harness-context")["compactions"] == 1
    # Its twin: after a counted PreCompact, PostCompact holds the count.
    clock.advance(5)
    recording.apply_hook(seat, session, "PreCompact", {"trigger": "auto"}, clock)
    clock.advance(5)
    recording.apply_hook(seat, session, "PostCompact", {"trigger": "auto"}, clock)
    context = record(seat, "harness-context")
    assert (context["compactions"], context["lastCompactionTrigger"], context["lastCompactionMs"]) == (
        2, "auto", clock.wall_ms())


def test_a_late_hook_never_replaces_the_terminal_record(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    recording.apply_hook(seat, session, "UserPromptSubmit", {}, clock)
    writer = harness_state.Writer(seat.directory, seat.agent, "claude", clock, pty_session=seat.agent,
                                  incarnation=session.token, claimed_seq=session.seq)
    clock.advance(1)
    assert writer.ended("signal 15")
    clock.advance(1)
    assert recording.apply_hook(seat, session, "PostToolUse", {}, clock) == []
    assert (record(seat, "harness-state")["state"], record(seat, "harness-state")["exit"]) == ("ended", "signal 15")


def test_a_wrapperless_session_start_claims_and_later_hooks_adopt_by_token(catalog, clock) -> None:
    seat = make_seat(catalog)
    harness_context.Writer(seat.directory, seat.agent, "claude", "old", clock).publish(
        harness_context.Reading(used_tokens=190000, window_tokens=200000, used_percent=95))
    start = capture("2.1.328/hooks/22-SessionStart.json")
    session = Session(f"claude-session-{start['session_id']}", None, seat.agent, False)
    clock.advance(1)
    assert recording.apply_hook(seat, session, "SessionStart", start, clock) == ["harness-state"]
    assert record(seat, "harness-context") is None  # the claim removed the previous fill
    clock.advance(1)
    recording.apply_hook(seat, session, "UserPromptSubmit", capture("2.1.328/hooks/23-UserPromptSubmit.json"), clock)
    value = record(seat, "harness-state")
    assert (value["state"], value["incarnation"], value["seq"]) == ("active", session.token, 1)


def test_a_foreign_session_hook_does_not_write(catalog, clock) -> None:
    seat = make_seat(catalog)
    wrapper_session(seat, clock, token="the-wrapper")
    stray = Session("claude-session-other", None, seat.agent, False)
    clock.advance(1)
    assert recording.apply_hook(seat, stray, "UserPromptSubmit", {}, clock) == []
