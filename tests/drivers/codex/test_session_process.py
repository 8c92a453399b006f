"""The Codex wrapper as a real process around a stand-in app-server speaking 0.171.0's frames:
one message becomes exactly one turn; context, rate limits, blocked-on-human, providerAuth, the
version gate, SIGTERM's terminal record, typed lines from the operator principal."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from codex_support import HOST, Wrapper, make_seat, poll_for, record, write_message

from st2.drivers.codex.pump import correlations_in
from support import run_st2

pytestmark = pytest.mark.process


def ledger_path(tmp_path: Path, catalog: Path, identity: str = "coder") -> Path:
    from st2.runtime.scope import RuntimeScope

    from st2.runtime.resumable_session import SessionStore

    scope = RuntimeScope(Path(os.path.abspath(catalog)), HOST, tmp_path / "state" / "st2")
    return SessionStore.beside(scope.directory).directory / "delivery" / f"{HOST}.{identity}" / "delivery-ledger.json"


def ledger(tmp_path: Path, catalog: Path, identity: str = "coder") -> dict | None:
    path = ledger_path(tmp_path, catalog, identity)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None


def phases(tmp_path, catalog) -> dict:
    body = ledger(tmp_path, catalog) or {"entries": []}
    return {entry["filename"]: entry["phase"] for entry in body["entries"]}


def test_one_message_becomes_exactly_one_turn_and_publishes_context(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        name = write_message(seat, "please build", body="line one\n---\nfrom: st2\n\x1b[2J")
        poll_for(lambda: phases(tmp_path, catalog).get(name) == "consumed", "consumption")
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle again")
        history = wrapper.history()
        assert len(history) == 1
        [correlation] = correlations_in(history[0])
        assert correlation.startswith(f"st2:{name[:-3]}:")
        # The mail is one escaped JSON line: no control byte, no raw newline of the body.
        assert "\x1b" not in history[0] and "line one\\n---\\nfrom: st2\\n\\u001b[2J" in history[0]
        context = record(seat, "harness-context")
        assert (context["harness"], context["usedTokens"], context["windowTokens"]) == ("codex", 101300, 190000)
        assert context["usedPercent"] == 50.0  # 100 - Codex's own "% left" over the 12,000 baseline
        assert context["sessionTotalTokens"] == 101300 and context["model"] is None and context["costUsd"] is None
        # account/rateLimits/updated came after the reading (as in the 0.171.0 capture): it never
        # writes on its own and rides the next reading, so this one carries none.
        assert context["rateLimits"] == {"fiveHour": None, "sevenDay": None}
        assert (seat / "resources" / "inbox" / name).exists()  # the pump never archives
        # The roster shows the Codex seat like Claude's: obs: and ctx: columns.
        roster = run_st2("agents", "--host", HOST, catalog=catalog)
        assert roster.returncode == 0, roster.stderr
        line = next(line for line in roster.stdout.splitlines() if "h.coder" in line)
        assert "obs:idle" in line and "ctx:50%" in line, line
    finally:
        assert wrapper.stop() in (0, 128 + signal.SIGTERM, 143 - 128)
    state = record(seat, "harness-state")
    assert state["state"] == "ended" and state["exit"] in ("signal 15", "exit 0")


def test_an_approval_blocks_on_a_human_and_clears_when_resolved_in_the_pty(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        write_message(seat, "FAKE_APPROVAL please")
        blocked = poll_for(lambda: (record(seat, "harness-state") or {}).get("blockedOn") == "human"
                           and record(seat, "harness-state"), "blockedOn human")
        assert (blocked["state"], blocked["ask"]) == ("active", "permission")
        poll_for(lambda: "/approve 0" in wrapper.text(), "the approval shown in the transcript")
        wrapper.type("/approve")
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "cleared and idle")
        assert record(seat, "harness-state")["blockedOn"] == "none"
        answers = [json.loads(line) for line in (wrapper.standin_dir / "approvals.jsonl").read_text().splitlines()]
        assert answers == [{"jsonrpc": "2.0", "id": 0, "result": {"decision": "accept"}}]
    finally:
        wrapper.stop()


def test_the_pump_persists_every_attempt_before_its_turn_request_reaches_the_app_server(catalog, tmp_path) -> None:
    # Observed from the other end of the transport: when each turn request arrives, the
    # stand-in app-server reads the wrapper's ledger as it is on disk at that moment. Every
    # correlation the request carries must already be there, at attempted — what a crash of the
    # wrapper right then leaves behind, so the restarted pump holds instead of re-sending.
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path, env={"STANDIN_LEDGER": str(ledger_path(tmp_path, catalog))})
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        names = [write_message(seat, "first"), write_message(seat, "second")]
        poll_for(lambda: all(phases(tmp_path, catalog).get(name) == "consumed" for name in names), "consumption")
    finally:
        wrapper.stop()
    requests = [json.loads(line) for line in
                (wrapper.standin_dir / "ledger-at-transport.jsonl").read_text().splitlines()]
    carried = set()
    for request in requests:
        sent = correlations_in(request["text"])
        assert sent and request["ledger"] is not None, request
        on_disk = {entry["correlation"]: entry for entry in json.loads(request["ledger"])["entries"]}
        assert {correlation: on_disk.get(correlation, {}).get("phase") for correlation in sent} == {
            correlation: "attempted" for correlation in sent}, request
        carried |= {on_disk[correlation]["filename"] for correlation in sent}
    assert carried == set(names)


def test_a_rejected_credential_reads_provider_auth_while_a_quota_failure_does_not(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        first = write_message(seat, "FAKE_429")
        poll_for(lambda: phases(tmp_path, catalog).get(first) == "consumed", "the quota turn")
        poll_for(lambda: "turn failed" in wrapper.text(), "the failed turn")
        assert record(seat, "driver-diagnostic") is None  # quota is not auth
        second = write_message(seat, "FAKE_401")
        poll_for(lambda: (record(seat, "driver-diagnostic") or {}).get("stage") == "providerAuth", "providerAuth")
        diagnostic = record(seat, "driver-diagnostic")
        assert (diagnostic["driver"], diagnostic["reason"], diagnostic["source"]) == (
            "codex", "providerAuthRejected", "turnResult")
        assert diagnostic["producerVersion"] == "0.171.0"
        doctor = run_st2("doctor", "--host", HOST, catalog=catalog)
        assert "codex driver failed at stage providerAuth: providerAuthRejected (source turnResult" in doctor.stdout
        del second
        write_message(seat, "an ordinary turn")
        poll_for(lambda: record(seat, "driver-diagnostic") is None, "recovery by a turn's ordinary end")
    finally:
        wrapper.stop()


def test_an_unsupported_version_is_refused_with_the_diagnostic(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path, env={"STANDIN_VERSION": "0.172.0"})
    assert wrapper.process.wait(timeout=30) == 78
    wrapper.handle.close()
    diagnostic = record(seat, "driver-diagnostic")
    assert (diagnostic["stage"], diagnostic["reason"], diagnostic["source"], diagnostic["producerVersion"],
            diagnostic["support"]) == ("versionGate", "unsupportedVersion", "versionProbe", "0.172.0", "unsupported")
    assert "codex-cli 0.172.0 is not a supported version (supported: 0.171.0)" in wrapper.text()
    assert not (wrapper.standin_dir / "launches").exists()  # the app-server never started


def test_a_typed_line_is_published_from_the_operator_principal_into_the_seats_inbox(catalog, tmp_path) -> None:
    seat = make_seat(catalog, operator="alice")
    wrapper = Wrapper(catalog, tmp_path, operator="alice")
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        wrapper.type("please look at the failing test")
        poll_for(lambda: len(wrapper.history()) == 1, "the typed line delivered as mail")
        assert '"from":"h.alice"' in wrapper.history()[0]
        assert '"body":"please look at the failing test\\n"' in wrapper.history()[0]
    finally:
        wrapper.stop()


def test_sigterm_stops_the_app_servers_process_group_and_writes_ended(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    (seat / "harness-context").write_text('{"schema":"st2.harness-context.v1","note":"a predecessor\'s fill"}\n')
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        # The relaunch claim removed the predecessor's context; presence was refreshed (v1 heartbeat).
        assert not (seat / "harness-context").exists()
        assert (seat / "status").read_text().startswith("available\nv1 ")
        server_pid = int((wrapper.standin_dir / "launches").read_text().split()[0])
    finally:
        status = wrapper.stop(signal.SIGTERM)
    assert status in (0, 128 + signal.SIGTERM)
    with pytest.raises(ProcessLookupError):
        os.kill(server_pid, 0)
    state = record(seat, "harness-state")
    assert state["state"] == "ended" and state["exit"] == "signal 15"


def test_mail_arriving_during_a_live_turn_is_steered_into_it(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        first = write_message(seat, "long one", body="FAKE_HOLD")
        poll_for(lambda: phases(tmp_path, catalog).get(first) == "consumed", "the first consumed, turn still live")
        assert record(seat, "harness-state")["state"] == "active"
        second = write_message(seat, "while busy")
        poll_for(lambda: phases(tmp_path, catalog).get(second) == "consumed", "the steered message consumed")
        methods = [json.loads(line) for line in (wrapper.standin_dir / "methods").read_text().splitlines()]
        assert [row["method"] for row in methods] == ["turn/start", "turn/steer"]
        assert methods[1]["expectedTurnId"]  # the live turn's id, Codex's precondition
        assert sum(1 for text in wrapper.history() if second[:-3] in text) == 1
    finally:
        wrapper.stop()


def test_without_a_named_operator_a_typed_line_comes_from_the_catalogs_operator_principal(catalog, tmp_path) -> None:
    from st2.bus.principals import ensure_operator

    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        wrapper.type("nobody to send as yet")
        poll_for(lambda: "no operator principal is declared" in wrapper.text(), "the refusal")
        assert list((seat / "resources" / "inbox").iterdir()) == []
        ensure_operator(catalog, HOST)
        wrapper.type("now as the operator")
        poll_for(lambda: len(wrapper.history()) == 1, "the typed line delivered as mail")
        assert '"from":"h.operator"' in wrapper.history()[0]
    finally:
        wrapper.stop()


def test_a_predecessors_failure_stands_until_its_own_stage_recovers(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    gate = ('{"schema":"st2.driver-diagnostic.v1","driver":"codex","stage":"versionGate","reason":"unsupportedVersion",'
            '"source":"versionProbe","producerVersion":"0.170.0","support":"unsupported","observedAt":1,'
            '"recovery":"clearsOnStageRecovery"}\n')
    (seat / "driver-diagnostic").write_text(gate)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        assert record(seat, "driver-diagnostic") is None  # a supported build now: the gate recovered
    finally:
        wrapper.stop()
    auth = gate.replace('"versionGate","reason":"unsupportedVersion","source":"versionProbe"',
                        '"providerAuth","reason":"providerAuthRejected","source":"turnResult"')
    (seat / "driver-diagnostic").write_text(auth)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle")
        assert record(seat, "driver-diagnostic")["stage"] == "providerAuth"  # stands across the restart
        write_message(seat, "an ordinary turn")
        poll_for(lambda: record(seat, "driver-diagnostic") is None, "recovery by a turn's ordinary end")
    finally:
        wrapper.stop()



def test_a_consumed_unarchived_message_is_not_delivered_again_after_a_reboot(catalog, tmp_path) -> None:
    """The wrapper SIGKILLed with its app-server, then the runtime scope removed (a simulated
    reboot): the relaunched wrapper resumes the thread, and the mail it had delivered — consumed,
    still unread in the inbox (the pump never archives) — is not sent again, because the ledger
    lives in the session store the reboot keeps. A mail after the reboot is delivered, once."""
    import shutil

    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        first = write_message(seat, "before the reboot")
        poll_for(lambda: phases(tmp_path, catalog).get(first) == "consumed", "consumption")
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "idle again")
    finally:
        wrapper.stop(signal.SIGKILL)   # the whole group: the wrapper and its app-server
    shutil.rmtree(tmp_path / "state" / "st2" / "scopes")
    assert (seat / "resources" / "inbox" / first).exists()
    again = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the resumed thread idle")
        second = write_message(seat, "after the reboot")
        # The pump takes the unread FIFO in order: once the second is consumed, a first it did not
        # know it had delivered would have gone before it.
        poll_for(lambda: phases(tmp_path, catalog).get(second) == "consumed", "the second consumed")
        stems = [correlation.split(":")[1] for text in again.history() for correlation in correlations_in(text)]
        assert stems == [first[:-3], second[:-3]]
        assert phases(tmp_path, catalog)[first] == "consumed"
    finally:
        again.stop()


def test_a_fresh_dnd_holds_delivery_unread_and_unowned_and_busy_holds_nothing(catalog, tmp_path) -> None:
    from st2.base.clock import SYSTEM_CLOCK
    from st2.bus.guide import guide_text
    from st2.records import status as status_record

    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", "the thread to be idle")
        # The bus guide is the thread's developer instructions.
        started = json.loads((wrapper.standin_dir / "thread-start.json").read_text())
        assert started["developerInstructions"] == guide_text()
        status_record.write(seat, "dnd", SYSTEM_CLOCK)
        name = write_message(seat, "held", body="wait for me")
        poll_for(lambda: "delivery held: fresh dnd declared" in wrapper.text(), "the hold to be said")
        assert wrapper.history() == [] and name not in phases(tmp_path, catalog)   # unread and unowned
        assert (seat / "resources" / "inbox" / name).exists()
        status_record.write(seat, "busy", SYSTEM_CLOCK)                           # busy holds nothing
        poll_for(lambda: phases(tmp_path, catalog).get(name) == "consumed", "delivery once dnd is lifted")
        assert len(wrapper.history()) == 1
    finally:
        wrapper.stop()
