"""Claude's rejected credential: only StopFailure's typed ``authentication_failed`` publishes
``providerAuth`` (never a rate limit, a billing error, the prose fields or a sub-agent's failure);
only a top-level Stop clears it; the roster and Doctor read it; telemetry labels are the bounded
axes only."""

from __future__ import annotations

import json

import pytest

from support_claude import make_seat, record
from test_hook_sequence import wrapper_session

from st2.drivers.claude import recording
from st2.records import driver_diagnostic

# The documented StopFailure input shape (captures/claude-code/docs-2.1.239/hook-inputs/StopFailure.input.json),
# with the typed class a 401 yields; the prose fields say "auth" for the 429 too and are never read.
AUTH = {"session_id": "abc123", "hook_event_name": "StopFailure", "error": "authentication_failed",
        "error_details": "401 Unauthorized", "last_assistant_message": "API Error: invalid x-api-key"}
RATE = {"session_id": "abc123", "hook_event_name": "StopFailure", "error": "rate_limit",
        "error_details": "429 authentication rate limit", "last_assistant_message": "authentication failed, retry"}


def test_only_the_typed_credential_class_publishes_provider_auth_and_only_an_ordinary_end_clears_it(catalog,
                                                                                                     clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    for payload in (RATE, dict(RATE, error="billing_error"), dict(AUTH, agent_id="sub-1"), dict(AUTH, error=None)):
        recording.apply_hook(seat, session, "StopFailure", payload, clock)
        assert record(seat, "driver-diagnostic") is None, payload
    clock.advance(5)
    assert "driver-diagnostic" in recording.apply_hook(seat, session, "StopFailure", AUTH, clock)
    assert record(seat, "driver-diagnostic") == {
        "schema": "st2.driver-diagnostic.v1", "driver": "claude", "stage": "providerAuth",
        "reason": "providerAuthRejected", "source": "turnResult", "support": "unknown",
        "observedAt": clock.wall_ms(), "recovery": "clearsOnStageRecovery"}
    # Neither a 429 after it, a sub-agent's ordinary end, nor a new prompt clears it.
    for event, payload in (("StopFailure", RATE), ("Stop", {"agent_id": "sub-1"}), ("UserPromptSubmit", {})):
        recording.apply_hook(seat, session, event, payload, clock)
        assert record(seat, "driver-diagnostic")["stage"] == "providerAuth"
    assert "driver-diagnostic" in recording.apply_hook(seat, session, "Stop", {"session_id": "abc123"}, clock)
    assert record(seat, "driver-diagnostic") is None


@pytest.mark.process
def test_roster_and_doctor_read_a_rejected_claude_credential(catalog, clock) -> None:
    """Through the real CLI: the roster's driverDiagnostic and Doctor's advisory (its exit status
    unchanged), and a turn's ordinary end silences both."""
    from support import run_st2, st2_env

    seat = make_seat(catalog)
    (seat.directory / "agent.kdl").write_text('agent "worker" {\n    argv "sh" "-c" "true"\n}\n')
    session = wrapper_session(seat, clock)
    recording.apply_hook(seat, session, "StopFailure", AUTH, clock)
    env = st2_env(catalog, ST2_CLOCK_WALL_MS=str(clock.wall_ms() + 2000))
    roster = json.loads(run_st2("agents", "--json", "--host", "host", env=env).stdout)
    [row] = [row for row in roster if row["identity"] == "host.worker"]
    assert (row["driverDiagnostic"]["status"], row["driverDiagnostic"]["stage"],
            row["driverDiagnostic"]["evidenceAgeMs"]) == ("failure", "providerAuth", 2000)
    advised = run_st2("doctor", "--host", "host", env=env)
    assert (f"advisory: {seat.agent}: driver-diagnostic: claude driver failed at stage providerAuth: "
            "providerAuthRejected (source turnResult, evidence 2s old); recovery: clearsOnStageRecovery") in (
        advised.stdout.splitlines())
    recording.apply_hook(seat, session, "Stop", {}, clock)
    quiet = run_st2("doctor", "--host", "host", env=env)
    assert "driver-diagnostic" not in quiet.stdout and quiet.returncode == advised.returncode
    assert driver_diagnostic.repair_text(driver_diagnostic.read(json.dumps({
        "schema": "st2.driver-diagnostic.v1", "driver": "claude", "stage": "providerAuth",
        "reason": "providerAuthRejected", "source": "turnResult", "support": "unknown", "observedAt": 1,
        "recovery": "clearsOnStageRecovery"}).encode(), 2)) is None  # no remedy text enters st2


def test_telemetry_counts_carry_exactly_the_bounded_axes(catalog, clock) -> None:
    seat = make_seat(catalog)
    session = wrapper_session(seat, clock)
    driver_diagnostic.COUNTS.clear()
    recording.apply_hook(seat, session, "StopFailure", AUTH, clock)
    recording.apply_hook(seat, session, "Stop", {}, clock)
    key = ("claude", "providerAuth", "providerAuthRejected", "turnResult", "unknown")
    assert driver_diagnostic.COUNTS == {key + ("published",): 1, key + ("recovered",): 1}
    held = json.loads(json.dumps({"schema": "x", "driver": "codex", "stage": "delivery", "reason": "deliveryRejected",
                                  "source": "promptTransport", "producerVersion": "0.171.0", "support": "supported",
                                  "observedAt": 1, "recovery": "clearsOnStageRecovery"}))
    assert list(driver_diagnostic.telemetry_labels(held, "published")) == [
        "driver", "stage", "reason", "source", "support", "outcome"]  # never the version, time or anything else
