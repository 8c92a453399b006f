"""The message, request and event verbs through the real `st2` CLI: wire shapes as full strings,
refusals with nothing written, and the restore-beside-a-receipt cycle."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from st2.bus.mailbox import archive_of, inbox_of, message_names
from support import run_st2, st2_env

pytestmark = pytest.mark.process


def st2(catalog: Path, *args: str, input: str | None = None, agent: str | None = None):
    env = st2_env(catalog, **({"ST_AGENT": agent} if agent else {}))
    return run_st2(*args, input=input, env=env)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_ls_json_rows_are_the_pinned_wire_shape(bus_catalog: Path) -> None:
    first = ok(st2(bus_catalog, "message", "send", "robert", "--as", "h1.alice", "-m", "hello",
                   "--subject", "hi", "--tags", "a,b", "--priority", "high")).strip()
    second = ok(st2(bus_catalog, "message", "send", "h1.bob", "--subject", "", "--in-reply-to", first,
                    input="from stdin\n", agent="h1.carol")).strip()
    ts1, ts2 = int(first.split("-")[0]), int(second.split("-")[0])
    rows = ok(st2(bus_catalog, "message", "ls", "--json", agent="h1.bob"))
    assert rows == (
        f'[{{"filename":"{first}","ts":{ts1},"from":"h1.alice","subject":"hi","inReplyTo":null,'
        f'"tags":["a","b"],"priority":"high"}},'
        f'{{"filename":"{second}","ts":{ts2},"from":"h1.carol","subject":"","inReplyTo":"{first}",'
        f'"tags":[],"priority":null}}]\n'
    )
    with_body = ok(st2(bus_catalog, "message", "ls", "h1.bob", "--json", "--include-body", "--from", "h1.carol"))
    assert with_body == (
        f'[{{"filename":"{second}","ts":{ts2},"from":"h1.carol","subject":"","inReplyTo":"{first}",'
        f'"tags":[],"priority":null,"body":"from stdin\\n"}}]\n'
    )
    assert ok(st2(bus_catalog, "message", "ls", "robert", "--count", "--since", str(ts1))) == (
        "1\n" if ts2 > ts1 else "0\n"
    )
    assert ok(st2(bus_catalog, "message", "read", "robert", first, "--json")) == (
        f'{{"filename":"{first}","ts":{ts1},"from":"h1.alice","subject":"hi","inReplyTo":null,'
        f'"tags":["a","b"],"priority":"high","body":"hello\\n"}}\n'
    )
    assert ok(st2(bus_catalog, "message", "ls", "--json", agent="h1.alice")) == "[]\n"


def test_an_empty_box_lists_as_an_empty_array_and_a_human_header(bus_catalog: Path) -> None:
    assert ok(st2(bus_catalog, "message", "ls", "alice", "--json")) == "[]\n"
    assert ok(st2(bus_catalog, "message", "ls", "alice")) == "# 0 messages in h1.alice inbox\n"


def test_sent_lists_the_ledger_with_the_recipient(bus_catalog: Path) -> None:
    name = ok(st2(bus_catalog, "message", "send", "--to-id", "carol-1", "-m", "x", "--subject", "s",
                  agent="h1.alice")).strip()
    assert ok(st2(bus_catalog, "message", "sent", "--json", agent="h1.alice")) == (
        f'[{{"filename":"{name}","ts":{int(name[:13])},"to":"h1.carol","from":"h1.alice","subject":"s",'
        f'"inReplyTo":null,"tags":[],"priority":null}}]\n'
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("message", "send", "nobody", "-m", "x"), "no agent 'nobody'"),
        (("message", "send", "bob", "-m", "x"), "ambiguous recipient 'bob': it names h1.bob, h2.bob"),
        (("message", "send", "--to-id", "carol", "-m", "x"), "no agent with id 'carol'"),
        (("message", "send", "gone", "-m", "x"), "retired"),
        (("message", "send", "alice", "-m", "x", "--subject", "a\nfrom: evil"), "control character"),
        (("message", "send", "alice", "-m", "x", "--as", "../../etc"), "'/' or '..'"),
        (("message", "archive", "alice", "../agent.kdl"), "not a message filename"),
        (("event", "emit", "robert", "--stream", "deploy", "--event-id", "1", "-m", "x"), "declares no stream"),
        (("request", "send", "robert", "--as", "h1.alice", "--idempotency-key", "k", "-m", "{}"),
         "not a declared service principal"),
    ],
)
def test_refusals_name_the_problem_and_write_nothing(bus_catalog: Path, snapshot, args, message) -> None:
    before = snapshot(bus_catalog)
    result = st2(bus_catalog, *args, agent="h1.carol")
    assert result.returncode == 1
    assert message in result.stderr
    assert result.stdout == ""
    assert snapshot(bus_catalog) == before


def test_a_send_without_an_acting_identity_is_refused(bus_catalog: Path) -> None:
    result = st2(bus_catalog, "message", "send", "alice", "-m", "x")
    assert result.returncode == 1 and "pass --as, set $ST_AGENT, or declare the operator principal" in result.stderr


def test_an_oversize_message_is_refused_with_a_clear_error(bus_catalog: Path, snapshot) -> None:
    before = snapshot(bus_catalog)
    result = st2(bus_catalog, "message", "send", "alice", input="x" * (1024 * 1024 + 1), agent="h1.bob")
    assert result.returncode == 1 and "the limit is 1048576 bytes" in result.stderr
    assert snapshot(bus_catalog) == before


def test_a_restored_inbox_copy_is_hidden_and_cleaned_by_the_next_archive_repeatably(bus_catalog: Path) -> None:
    name = ok(st2(bus_catalog, "message", "send", "alice", "-m", "once", agent="h1.bob")).strip()
    alice = bus_catalog / "agents/h1/alice"
    assert ok(st2(bus_catalog, "message", "archive", name, agent="h1.alice")) == "archived\n"
    receipt = (archive_of(alice) / name).read_bytes()
    for _ in range(2):
        shutil.copy(archive_of(alice) / name, inbox_of(alice) / name)  # the sync engine restores it
        assert ok(st2(bus_catalog, "message", "ls", "alice", "--json")) == "[]\n"
        shutil.copy(archive_of(alice) / name, inbox_of(alice) / name)
        assert ok(st2(bus_catalog, "message", "archive", "alice", name)) == "already-archived\n"
        assert message_names(inbox_of(alice)) == []
        assert (archive_of(alice) / name).read_bytes() == receipt
    read = st2(bus_catalog, "message", "read", name, agent="h1.alice")
    assert read.returncode == 1 and "it is archived; add --archive" in read.stderr
    assert ok(st2(bus_catalog, "message", "read", name, "--archive", agent="h1.alice")) == "from:        h1.bob\n\nonce\n"


def test_reply_threads_back_to_the_sender_and_thread_shows_the_tree(bus_catalog: Path) -> None:
    root = ok(st2(bus_catalog, "message", "send", "alice", "-m", "q", "--subject", "question", agent="h1.bob")).strip()
    answer = ok(st2(bus_catalog, "message", "reply", root, "-m", "a", agent="h1.alice")).strip()
    follow = ok(st2(bus_catalog, "message", "reply", answer, "-m", "thanks", agent="h1.bob")).strip()
    assert json.loads(ok(st2(bus_catalog, "message", "read", "h1.bob", answer, "--json")))["subject"] == "re: question"
    assert ok(st2(bus_catalog, "message", "thread", follow, "--tree")) == (
        f"{root}  from h1.bob  question\n"
        f"  {answer}  from h1.alice  re: question\n"
        f"    {follow}  from h1.bob  re: question\n"
    )


def test_request_and_event_verbs_print_their_json_receipts(bus_catalog: Path) -> None:
    sent = json.loads(ok(st2(bus_catalog, "request", "send", "robert", "--as", "h1.svc", "--idempotency-key",
                             "k1", "--tag", "kind=x", "-m", '{"n":1}', "--json")))
    assert ok(st2(bus_catalog, "request", "status", "--idempotency-key", "k1", "--json", agent="h1.svc")) == (
        f'{{"status":"pending","idempotencyKey":"k1","requestFilename":"{sent["filename"]}"}}\n'
    )
    ok(st2(bus_catalog, "request", "reply", sent["filename"], "-m", '{"done":true}', agent="h1.bob"))
    assert ok(st2(bus_catalog, "request", "status", "--idempotency-key", "k1", "--json", agent="h1.svc")) == (
        f'{{"status":"replied","idempotencyKey":"k1","requestFilename":"{sent["filename"]}","from":"h1.bob",'
        f'"tags":{{}},"body":{{"done":true}}}}\n'
    )
    event = ok(st2(bus_catalog, "event", "emit", "--stream", "ci", "--event-id", "run-1", "-m", "green", "--json",
                   agent="h1.bob"))
    name = json.loads(event)["filename"]
    assert event == (
        f'{{"status":"published","stream":"ci","eventId":"run-1","filename":"{name}","deduplicated":false,'
        f'"superseded":null}}\n'
    )


def test_the_catalog_is_the_bus_root_and_no_flat_mailbox_is_synthesized(bus_catalog: Path) -> None:
    name = ok(st2(bus_catalog, "message", "send", "alice", "-m", "x", agent="h1.bob")).strip()
    assert (bus_catalog / "agents/h1/alice/resources/inbox" / name).is_file()
    for recipient in ("nobody", "h1.nobody"):
        assert st2(bus_catalog, "message", "send", recipient, "-m", "x", agent="h1.bob").returncode == 1
        assert st2(bus_catalog, "message", "ls", recipient).returncode == 1
    assert sorted(entry.name for entry in bus_catalog.iterdir()) == [".st2", "agents", "principals"]
    assert not list(bus_catalog.rglob("*nobody*"))


def test_a_hostile_file_dropped_into_an_inbox_cannot_drive_the_readers_terminal(bus_catalog: Path) -> None:
    inbox = inbox_of(bus_catalog / "agents/h1/alice")
    inbox.mkdir(parents=True)
    name = "1784649988123-abc23z.md"
    (inbox / name).write_bytes(b"---\nfrom: ev\x1b]0;owned\x07il\nsubject: \x1b[2Jclear\xe2\x80\xae\n---\nbody\x1b[31m\n")
    listing = ok(st2(bus_catalog, "message", "ls", agent="h1.alice"))
    shown = ok(st2(bus_catalog, "message", "read", name, agent="h1.alice"))
    assert "\x1b" not in listing + shown and "\u202e" not in listing + shown
    assert f"{name}  from ev\\x1b]0;owned\\x07il  \\x1b[2Jclear\\u202e\n" in listing
    assert shown == "from:        ev\\x1b]0;owned\\x07il\nsubject:     \\x1b[2Jclear\\u202e\n\nbody\\x1b[31m\n"
    assert "\\u001b[2Jclear" in ok(st2(bus_catalog, "message", "ls", "--json", agent="h1.alice"))
