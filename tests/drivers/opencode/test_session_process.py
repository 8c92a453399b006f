"""The opencode wrapper as a real process around the stand-in server built from the 1.18.33
captured frames: delivery read back to ``persisted`` exactly once, the context and state records,
the host-local launch state, the gates."""

from __future__ import annotations

import json
import os
import stat

import pytest
from opencode_support import Wrapper, make_seat, poll_for, record, write_message

pytestmark = pytest.mark.process


def test_mail_is_prompted_once_and_read_back_to_persisted(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        name = write_message(seat, "first", body="say hello")
        poll_for(lambda: wrapper.ledger().get(name, {}).get("phase") == "persisted", lambda: wrapper.text())
        poll_for(lambda: (record(seat, "harness-context") or {}).get("usedTokens") == 9942, lambda: wrapper.text())
        context = record(seat, "harness-context")
        assert (context["windowTokens"], context["usedPercent"], context["model"]) == (200000, 4.971, "fake/fake-model")
        requests = wrapper.model_requests()
        assert len(requests) == 1 and wrapper.ledger()[name]["correlation"] in requests[0]
        # A persisted entry holds further delivery until the recipient settles (never released).
        second = write_message(seat, "second", body="again")
        poll_for(lambda: "delivered" in wrapper.text(), "the first delivery line")
        assert second not in wrapper.ledger()
        os.rename(seat / "resources" / "inbox" / name, seat / "resources" / "archive" / name)
        poll_for(lambda: wrapper.ledger().get(second, {}).get("phase") == "persisted", lambda: wrapper.text())
        assert name not in wrapper.ledger() and len(wrapper.model_requests()) == 2
        # The port and password live in host-local state only (0600), never in the catalog.
        [server] = list(wrapper.state.glob("**/opencode/h.oc/server.json"))
        body = json.loads(server.read_text())
        assert list(body) == ["schema", "agent", "runtimeId", "port", "password", "sessionID", "pid"]
        assert body["schema"] == "st2.opencode-server.v1" and stat.S_IMODE(server.stat().st_mode) == 0o600
        # The server's log (what it is sent) is the owner's alone too, whatever the umask.
        assert stat.S_IMODE((server.parent / "serve.log").stat().st_mode) == 0o600
        assert body["password"] not in (seat / "agent.kdl").read_text()
        assert body["password"] not in " ".join(open(f"/proc/{wrapper.process.pid}/cmdline").read().split("\0"))
    finally:
        wrapper.stop()
    assert record(seat, "harness-state")["state"] == "ended"


def test_an_unsupported_version_is_refused_at_the_gate(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path, env={"STANDIN_VERSION": "1.18.34"})
    assert wrapper.process.wait(timeout=60) == 78
    wrapper.handle.close()
    diagnostic = record(seat, "driver-diagnostic")
    assert (diagnostic["stage"], diagnostic["reason"], diagnostic["producerVersion"], diagnostic["support"]) == (
        "versionGate", "unsupportedVersion", "1.18.34", "unsupported")
    assert "1.18.34 is not a supported version" in wrapper.text() and not wrapper.launches()


def test_an_unmeasured_build_admitted_by_the_catalog_runs_and_withholds_its_context(catalog, tmp_path) -> None:
    """A build outside the measured set launches only through catalog.kdl's admit-unmeasured: mail
    is delivered, the finished turn publishes no context reading, and the roster and Doctor say
    why (the ``context`` stage, ``context-withheld``)."""
    from support import run_st2, st2_env

    seat = make_seat(catalog)
    (catalog / "catalog.kdl").write_text('catalog {\n    admit-unmeasured "opencode" "1.18.34"\n}\n')
    wrapper = Wrapper(catalog, tmp_path, env={"STANDIN_VERSION": "1.18.34"})
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        name = write_message(seat, "first", body="say hello")
        poll_for(lambda: wrapper.ledger().get(name, {}).get("phase") == "persisted", lambda: wrapper.text())
        # The finished assistant message (tokens.total 9942) reached the wrapper: it went idle again.
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        assert not (seat / "harness-context").exists()
        assert ("opencode 1.18.34 is not a measured build (measured: 1.18.25, 1.18.33); admitted by catalog.kdl "
                "admit-unmeasured, so no context reading is published") in wrapper.text()
        env = st2_env(catalog)
        [row] = [row for row in json.loads(run_st2("agents", "--json", "--host", "h", env=env).stdout)
                 if row["identity"] == "h.oc"]
        assert row["context"] is None
        diagnostic = row["driverDiagnostic"]
        assert (diagnostic["status"], diagnostic["driver"], diagnostic["stage"], diagnostic["reason"],
                diagnostic["source"], diagnostic["producerVersion"], diagnostic["support"]) == (
            "failure", "opencode", "context", "unmeasuredBuild", "versionProbe", "1.18.34", "unsupported")
        advised = run_st2("doctor", "--host", "h", env=env)
        assert ("advisory: h.oc: context-withheld: no context reading is published: opencode 1.18.34 is not a "
                "measured build (launched through catalog.kdl admit-unmeasured); run a measured build, or measure "
                "this one and admit it in the driver's gate") in advised.stdout.splitlines()
    finally:
        wrapper.stop()


def test_a_question_blocks_on_a_human_until_answered_and_a_typed_line_is_operator_mail(catalog, tmp_path) -> None:
    seat = make_seat(catalog)
    principal = catalog / "principals" / "h" / "operator"
    principal.mkdir(parents=True)
    (principal / "principal.kdl").write_text('principal "operator" host="h"\n')
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        asked = write_message(seat, "plan", body="FAKE_QUESTION")
        poll_for(lambda: (record(seat, "harness-state") or {}).get("blockedOn") == "human", lambda: wrapper.text())
        state = record(seat, "harness-state")
        assert (state["state"], state["blockedOn"], state["ask"]) == ("active", "human", "question")
        assert "Proceed with the plan?" in wrapper.text()
        wrapper.process.stdin.write(b"/answer yes, go ahead\n")
        wrapper.process.stdin.flush()
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        answers = (wrapper.standin_dir / "answers.jsonl").read_text().splitlines()
        assert [json.loads(line)["answers"] for line in answers] == [[["yes, go ahead"]]]
        # A typed line is a bus message into the seat's own inbox from the operator principal.
        os.rename(seat / "resources" / "inbox" / asked, seat / "resources" / "archive" / asked)
        wrapper.process.stdin.write(b"please also update the changelog\n")
        wrapper.process.stdin.flush()
        poll_for(lambda: "sent as h.operator" in wrapper.text(), lambda: wrapper.text())
        [typed] = [path for path in (seat / "resources" / "inbox").iterdir()]
        text = typed.read_text()
        assert "h.operator" in text and "please also update the changelog" in text
        poll_for(lambda: wrapper.ledger().get(typed.name, {}).get("phase") == "persisted", lambda: wrapper.text())
    finally:
        wrapper.stop()


def test_a_fresh_dnd_holds_delivery_unread_and_unowned_and_busy_holds_nothing(catalog, tmp_path) -> None:
    from st2.base.clock import SYSTEM_CLOCK
    from st2.bus.guide import guide_text
    from st2.records import status as status_record

    seat = make_seat(catalog)
    wrapper = Wrapper(catalog, tmp_path)
    try:
        poll_for(lambda: (record(seat, "harness-state") or {}).get("state") == "idle", lambda: wrapper.text())
        status_record.write(seat, "dnd", SYSTEM_CLOCK)
        name = write_message(seat, "held", body="wait for me")
        poll_for(lambda: "delivery held: fresh dnd declared" in wrapper.text(), lambda: wrapper.text())
        assert wrapper.model_requests() == [] and name not in wrapper.ledger()   # unread and unowned
        assert (seat / "resources" / "inbox" / name).exists()
        status_record.write(seat, "busy", SYSTEM_CLOCK)                         # busy holds nothing
        poll_for(lambda: wrapper.ledger().get(name, {}).get("phase") == "persisted", lambda: wrapper.text())
        # The bus guide rode the prompt as the session's system prompt.
        systems = [json.loads(line)["system"] for line in
                   (wrapper.standin_dir / "prompt-systems.jsonl").read_text().splitlines()]
        assert systems == [guide_text()]
    finally:
        wrapper.stop()
