"""Process-level proofs: concurrent publishers, concurrent replays, SIGKILL at random points.

Publishers run the real CLI entry point. The 8 × 250 senders each run in their own process and
call the CLI in a loop (interpreter start-up paid once per process, so the test stays fast); the
replays are 16 separate `st2` processes; the SIGKILL tests fork a child running the CLI in a
loop and kill it after a random delay (see driver_sender.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from st2.bus.envelope import parse
from st2.bus.filename import is_message_filename
from st2.bus.mailbox import archive_of, inbox_of, list_inbox, message_names
from st2.bus.publication import staging_directory
from st2.fs.atomic import sweep_orphans
from support import REPO, st2_env

DRIVER = Path(__file__).with_name("driver_sender.py")


def start(*args: str, catalog: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, *args], cwd=REPO, env=st2_env(catalog),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen, timeout: float = 120) -> str:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err
    return out


def every_file_is_a_complete_message(box: Path) -> list:
    names = os.listdir(box)
    assert all(is_message_filename(name) for name in names), sorted(set(names) - set(message_names(box)))
    messages = [parse(name, (box / name).read_bytes()) for name in names]
    for message in messages:
        assert message.sender is not None and message.body.endswith("END\n"), message.filename
    return messages


@pytest.mark.process
def test_eight_concurrent_senders_deliver_two_thousand_distinct_complete_messages(small_catalog: Path) -> None:
    senders = [start(str(DRIVER), "senders", str(small_catalog), str(index), "250", catalog=small_catalog)
               for index in range(8)]
    for process in senders:
        assert finish(process).strip() == "done"
    bob = small_catalog / "agents/h1/bob"
    messages = every_file_is_a_complete_message(inbox_of(bob))
    assert len(messages) == 2000
    assert Counter(m.subject for m in messages) == Counter(f"s{i}-{n}" for i in range(8) for n in range(250))
    for message in messages:
        index, number = message.subject[1:].split("-")
        assert message.sender == f"h1.sender{index}"
        assert message.body.startswith(f"payload {index}-{number}\n")
    assert len(list_inbox(bob)) == 2000
    assert os.listdir(staging_directory(small_catalog)) == []


def _replays(catalog: Path, count: int, *words: str) -> list[dict]:
    processes = [start("-m", "st2", *words, catalog=catalog) for _ in range(count)]
    return [json.loads(finish(process)) for process in processes]


@pytest.mark.process
def test_sixteen_concurrent_replays_of_one_request_publish_exactly_one(small_catalog: Path) -> None:
    receipts = _replays(small_catalog, 16, "request", "send", "robert", "--as", "h1.svc",
                        "--idempotency-key", "escalate:repo#7", "--tag", "kind=x", "-m",
                        '{"candidate":"abc"}', "--json")
    filenames = {receipt["filename"] for receipt in receipts}
    assert len(filenames) == 1
    assert sum(1 for receipt in receipts if not receipt["deduplicated"]) <= 1
    assert message_names(inbox_of(small_catalog / "agents/h1/bob")) == sorted(filenames)


@pytest.mark.process
def test_concurrent_replays_of_one_keyed_message_and_one_event_publish_exactly_one_each(small_catalog: Path) -> None:
    messages = _replays(small_catalog, 4, "message", "send", "robert", "--as", "h1.alice",
                        "--idempotency-key", "k1", "-m", "once", "--json")
    events = _replays(small_catalog, 4, "event", "emit", "robert", "--stream", "ci", "--event-id", "run-1",
                      "-m", "green", "--json")
    assert len({receipt["filename"] for receipt in messages}) == 1
    assert len({receipt["filename"] for receipt in events}) == 1
    assert sum(1 for receipt in messages if receipt["outcome"] == "created") == 1
    names = message_names(inbox_of(small_catalog / "agents/h1/bob"))
    assert names == sorted({messages[0]["filename"], events[0]["filename"]})


@pytest.mark.process
def test_a_sender_sigkilled_at_random_points_leaves_no_torn_file_and_no_temp_in_the_inbox(small_catalog: Path) -> None:
    killer = start(str(DRIVER), "killer", str(small_catalog), "send", "200", "1", catalog=small_catalog)
    assert finish(killer).strip() == "done"
    bob = small_catalog / "agents/h1/bob"
    messages = every_file_is_a_complete_message(inbox_of(bob))
    assert messages, "the children never published anything: the kill points never reached publication"
    sweep_orphans(staging_directory(small_catalog))
    assert os.listdir(staging_directory(small_catalog)) == []


@pytest.mark.process
def test_the_torn_file_check_catches_a_publisher_that_writes_in_place(small_catalog: Path) -> None:
    # The twin of the SIGKILL proofs: the same kills against a publisher that writes under the
    # final name leave files the check rejects, so the check is able to fail.
    killer = start(str(DRIVER), "killer", str(small_catalog), "in-place", "30", "4", catalog=small_catalog)
    assert finish(killer).strip() == "done"
    with pytest.raises(AssertionError):
        every_file_is_a_complete_message(inbox_of(small_catalog / "agents/h1/bob"))


@pytest.mark.process
def test_keyed_sends_and_reads_sigkilled_at_random_points_lose_nothing_and_duplicate_nothing(small_catalog: Path) -> None:
    killer = start(str(DRIVER), "killer", str(small_catalog), "keyed", "120", "2", catalog=small_catalog)
    assert finish(killer).strip() == "done"
    bob = small_catalog / "agents/h1/bob"
    messages = every_file_is_a_complete_message(inbox_of(bob))
    confirmed = [int(x) for x in (small_catalog / ".progress-keyed").read_text().split()]
    keys = Counter(m.body.split("\n", 1)[0].removeprefix("payload ") for m in messages)
    assert max(keys.values()) == 1, "a key published twice"
    assert {f"k{n}" for n in confirmed} <= set(keys), "a confirmed send is missing"
    assert len(keys) <= len(confirmed) + 1  # at most the one interrupted at the last kill
    total = set(keys)

    reader = start(str(DRIVER), "killer", str(small_catalog), "archive", "80", "3", catalog=small_catalog)
    assert finish(reader).strip() == "done"
    unread = {m.filename for m in list_inbox(bob)}
    archived = set(message_names(archive_of(bob)))
    assert not unread & archived
    assert len(unread | archived) == len(total)  # every message is in exactly one box
    every_file_is_a_complete_message(archive_of(bob))
