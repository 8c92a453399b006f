"""Idempotent service requests: one exact JSON request per key, typed replies to the principal."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from st2.bus import BusError
from st2.bus import request as requests
from st2.bus.mailbox import archive_message, inbox_of, message_names

HOST = "h1"


def publish(catalog: Path, clock, body=None, key: str = "escalate:repo#7:abc", **overrides):
    arguments = dict(principal_name="h1.svc", recipient="robert", idempotency_key=key,
                     tags={"kind": "escalation"}, body={"candidate": "abc"} if body is None else body)
    arguments.update(overrides)
    return requests.send(catalog, HOST, clock=clock, **arguments)


def bob_inbox(catalog: Path) -> Path:
    return inbox_of(catalog / "agents/h1/bob")


def test_one_request_per_key_with_the_exact_envelope(bus_catalog: Path, clock) -> None:
    first = publish(bus_catalog, clock)
    again = publish(bus_catalog, clock)
    assert first.json_row() == {"status": "published", "idempotencyKey": "escalate:repo#7:abc",
                                "filename": first.filename, "deduplicated": False}
    assert again.json_row()["deduplicated"] is True and again.filename == first.filename
    assert message_names(bob_inbox(bus_catalog)) == [first.filename]
    assert (bob_inbox(bus_catalog) / first.filename).read_text() == (
        "---\nfrom: h1.svc\nsubject: request escalate:repo#7:abc\ntags: st2-request\n---\n"
        '{"version":1,"idempotencyKey":"escalate:repo#7:abc","from":"h1.svc","to":"h1.bob",'
        '"replyTo":"h1.svc","tags":{"kind":"escalation"},"body":{"candidate":"abc"}}\n'
    )
    digest = hashlib.sha256(b"escalate:repo#7:abc").hexdigest()
    record = bus_catalog / "principals/h1/svc/resources/request-state/outgoing" / f"{digest}.json"
    assert json.loads(record.read_text())["filename"] == first.filename


def test_a_different_request_under_the_same_key_fails(bus_catalog: Path, clock, snapshot) -> None:
    publish(bus_catalog, clock)
    before = snapshot(bus_catalog)
    for change in ({"body": {"candidate": "def"}}, {"tags": {"kind": "other"}}, {"recipient": "alice"}):
        with pytest.raises(BusError, match="idempotency key reused with a different request"):
            publish(bus_catalog, clock, **change)
    assert snapshot(bus_catalog) == before


def test_member_order_of_the_json_body_does_not_make_a_different_request(bus_catalog: Path, clock) -> None:
    first = publish(bus_catalog, clock, body={"a": 1, "b": [2, {"d": 4, "c": 3}]})
    again = publish(bus_catalog, clock, body={"b": [2, {"c": 3, "d": 4}], "a": 1})
    assert again.filename == first.filename and again.deduplicated


def test_typed_reply_routes_to_the_principal_and_status_is_a_tagged_union(bus_catalog: Path, clock) -> None:
    sent = publish(bus_catalog, clock)
    assert requests.status(bus_catalog, HOST, principal_name="svc", idempotency_key=sent.idempotency_key) == {
        "status": "pending", "idempotencyKey": "escalate:repo#7:abc", "requestFilename": sent.filename,
    }
    assert requests.read(bus_catalog, HOST, agent_name="h1.bob", filename=sent.filename) == {
        "status": "request", "idempotencyKey": "escalate:repo#7:abc", "requestFilename": sent.filename,
        "from": "h1.svc", "tags": {"kind": "escalation"}, "body": {"candidate": "abc"},
    }
    clock.advance(1)
    answer = requests.reply(bus_catalog, HOST, agent_name="h1.bob", filename=sent.filename,
                            tags={"outcome": "needs-human"}, body={"outcome": "needs-human"}, clock=clock)
    again = requests.reply(bus_catalog, HOST, agent_name="h1.bob", filename=sent.filename,
                           tags={"outcome": "needs-human"}, body={"outcome": "needs-human"}, clock=clock)
    assert again.filename == answer.filename and again.deduplicated
    principal_inbox = inbox_of(bus_catalog / "principals/h1/svc")
    assert message_names(principal_inbox) == [answer.filename]
    assert not (bus_catalog / "agents" / "h1" / "svc").exists()  # no orphan agent mailbox
    expected = {"status": "replied", "idempotencyKey": "escalate:repo#7:abc", "requestFilename": sent.filename,
                "from": "h1.bob", "tags": {"outcome": "needs-human"}, "body": {"outcome": "needs-human"}}
    assert requests.status(bus_catalog, HOST, principal_name="h1.svc", idempotency_key=sent.idempotency_key) == expected
    archive_message(bus_catalog / "principals/h1/svc", answer.filename)  # read replies still count
    assert requests.status(bus_catalog, HOST, principal_name="h1.svc", idempotency_key=sent.idempotency_key) == expected


def test_a_principal_cannot_impersonate_an_agent(bus_catalog: Path, clock, snapshot) -> None:
    before = snapshot(bus_catalog)
    with pytest.raises(BusError, match="not a declared service principal"):
        publish(bus_catalog, clock, principal_name="h1.alice")
    with pytest.raises(BusError, match="not a declared service principal"):
        publish(bus_catalog, clock, principal_name="h1.unknown")
    (bus_catalog / "agents/h1/svc").mkdir(parents=True)
    (bus_catalog / "agents/h1/svc/agent.kdl").write_text('agent "svc" {\n    argv "sh"\n}\n')
    with pytest.raises(BusError, match="collides with an agent identity"):
        publish(bus_catalog, clock)
    (bus_catalog / "agents/h1/svc/agent.kdl").unlink()
    (bus_catalog / "agents/h1/svc").rmdir()
    assert snapshot(bus_catalog) == before


def test_only_the_addressed_agent_reads_or_replies(bus_catalog: Path, clock) -> None:
    sent = publish(bus_catalog, clock)
    with pytest.raises(BusError, match="no message"):
        requests.read(bus_catalog, HOST, agent_name="h1.alice", filename=sent.filename)
    with pytest.raises(BusError, match="no agent"):
        requests.reply(bus_catalog, HOST, agent_name="h1.svc", filename=sent.filename, tags={}, body={})


def test_a_plain_message_is_not_a_typed_request(bus_catalog: Path, clock) -> None:
    from st2.bus.addressing import resolve_seat
    from st2.bus.send import send

    plain = send(bus_catalog, resolve_seat(bus_catalog, "robert"), sender="h1.svc", body='{"version":1}', clock=clock)
    with pytest.raises(BusError, match="not a typed st2 request"):
        requests.read(bus_catalog, HOST, agent_name="h1.bob", filename=plain.filename)


def test_a_body_nested_past_the_recursion_limit_is_refused_not_raised(bus_catalog: Path, clock) -> None:
    from st2.bus.addressing import resolve_seat
    from st2.bus.send import send

    deep = "[" * 1000 + "]" * 1000
    with pytest.raises(BusError, match="not JSON"):
        requests.parse_body(deep)
    planted = send(bus_catalog, resolve_seat(bus_catalog, "robert"), sender="h1.svc", body=deep, clock=clock)
    with pytest.raises(BusError, match="not a typed st2 request"):
        requests.read(bus_catalog, HOST, agent_name="h1.bob", filename=planted.filename)


def test_a_principal_declaration_must_match_its_path(bus_catalog: Path, clock) -> None:
    (bus_catalog / "principals/h1/svc/principal.kdl").write_text('principal "other" host="h1"\n')
    with pytest.raises(BusError, match="differs from its directory"):
        publish(bus_catalog, clock)


@pytest.mark.parametrize("pair", ["novalue", "=x"])
def test_malformed_tags_and_bodies_are_refused(pair: str) -> None:
    with pytest.raises(BusError):
        requests.parse_tags([pair])
    with pytest.raises(BusError, match="not JSON"):
        requests.parse_body("{nope")


def test_a_principal_declared_without_host_takes_it_from_its_path(bus_catalog: Path, clock) -> None:
    (bus_catalog / "principals/h1/svc/principal.kdl").write_text('principal "svc"\n')
    assert publish(bus_catalog, clock).filename


def test_a_crash_replayed_request_finishes_the_reserved_publication(bus_catalog: Path, clock) -> None:
    first = publish(bus_catalog, clock)
    # Crash seam: the reservation is durable but the message never reached the inbox.
    (bob_inbox(bus_catalog) / first.filename).unlink()
    clock.advance(60)
    replay = publish(bus_catalog, clock)
    assert replay.filename == first.filename
    assert message_names(bob_inbox(bus_catalog)) == [first.filename]
    # Once the agent has read it, a replay never puts it back.
    archive_message(bus_catalog / "agents/h1/bob", first.filename)
    assert publish(bus_catalog, clock).deduplicated
    assert message_names(bob_inbox(bus_catalog)) == []


@pytest.mark.parametrize("text", ['principal r"svc" host="h1"\n', 'principal "svc" host="h1" colour="blue"\n',
                                  'principal "svc" host="h1" {\n    nickname "x"\n}\n'])
def test_the_bus_refuses_every_principal_declaration_validate_refuses(bus_catalog: Path, clock, text: str) -> None:
    """One reader for principal.kdl: a KDL 1 raw string, an unknown property or field is refused
    by the bus exactly as `st2 validate` refuses it, with validate's own diagnostic."""
    from st2.authoring.validation import validate_catalog

    (bus_catalog / "principals/h1/svc/principal.kdl").write_text(text)
    diagnostics = [d for d in validate_catalog(bus_catalog, "h1") if d.source == "principals/h1/svc/principal.kdl"]
    assert diagnostics and diagnostics[0].severity == "error"
    with pytest.raises(BusError) as refused:
        publish(bus_catalog, clock)
    assert diagnostics[0].message in str(refused.value)


def test_a_principal_with_its_presentation_fields_is_accepted_by_the_bus(bus_catalog: Path, clock) -> None:
    (bus_catalog / "principals/h1/svc/principal.kdl").write_text(
        'principal "svc" host="h1" {\n    name "Service"\n    description "posts replies"\n}\n')
    assert publish(bus_catalog, clock).filename
