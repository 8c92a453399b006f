"""Resync publication over real catalogs and real state records: one outstanding publication per
subscription, queued work dropped by deactivation or removal, and refusals classified by what
could admit them later (seed 003: "Pass progress is independent of publication", "Terminal
refusals are classified, not retried")."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.bus.mailbox import archive_of, list_box, list_inbox
from st2.resources import state as resource_state
from st2.resync.machine import Phase, Refusal
from st2.resync.publisher import Entry, Key, ResyncPublisher

OWNER = "h.owner"
SUBSCRIBER = "h.sub"
KEY = Key(SUBSCRIBER, OWNER, "doc", "changes")


@pytest.fixture(autouse=True)
def _host_local_state(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def seat(catalog: Path, host: str, identity: str, body: str = "") -> Path:
    directory = catalog / "agents" / host / identity
    (directory / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (directory / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    (directory / "agent.kdl").write_text(f'agent "{identity}" {{\n    argv "sh"\n{body}}}\n')
    return directory


def fleet(catalog: Path, subscriber_state: str = "running") -> tuple[Path, Path]:
    owner = seat(catalog, "h", "owner", '    resource "doc" uri="file:///srv/now.md"\n')
    lifecycle = "" if subscriber_state == "running" else f'    desired-state "{subscriber_state}" reason="away"\n'
    subscriber = seat(catalog, "h", "sub", '    stream "changes"\n'
                      '    subscribe "doc" stream="changes" agent="h.owner"\n' + lifecycle)
    return owner, subscriber


def advance(owner: Path, text: str, now_ms: int = 1_788_000_000_000) -> resource_state.State:
    """Accept one new result for the binding through the record's one writer."""
    facts = {"content": text}

    def change(current):
        revision = 1 if current is None else current.revision + 1
        return resource_state.State(OWNER, "doc", "file:///srv/now.md", 1, revision,
                                    resource_state.digest_facts(facts), now_ms, facts, None, now_ms)

    return resource_state.update(owner, OWNER, "doc", change, now_ms)


def publisher_over(catalog: Path, clock: FakeClock, *entries: Entry) -> ResyncPublisher:
    publisher = ResyncPublisher(catalog, "h", clock=clock, retry_seconds=5.0)
    publisher.refresh(list(entries) or [Entry(KEY, SUBSCRIBER, True)])
    return publisher


def cycle(publisher: ResyncPublisher) -> int:
    publisher.flush()
    return publisher.publish_handed()


def test_an_accepted_transition_reaches_the_subscriber_once_as_stream_work(catalog: Path, clock: FakeClock) -> None:
    from st2.ding.notice import message_notice

    owner, subscriber = fleet(catalog)
    record = advance(owner, "v1")
    publisher = publisher_over(catalog, clock)
    assert cycle(publisher) == 1
    assert cycle(publisher) == 0  # the same transition is never captured again
    [message] = list_inbox(subscriber)
    digest = record.host_digest
    assert message.sender == "stream:changes" and message.tags == ("st2-stream", "stream:changes")
    assert message.subject == "doc of h.owner is at revision 1"
    assert message.body == (f"Resource doc of h.owner changed: revision 1, generation 1, {digest}.\n\n"
                            + resource_state.encode(record).decode())
    notice = message_notice(message.filename, message.subject, message.sender, message.tags)
    assert notice == (f"[DING] st2-stream work on stream changes: [id:{message.filename[-9:-3]}] "
                      "doc of h.owner is at revision 1; check your inbox")
    advance(owner, "v2")
    assert cycle(publisher) == 1
    [latest] = list_inbox(subscriber)  # the unread revision 1 was superseded
    assert latest.subject == "doc of h.owner is at revision 2"
    assert [m.subject for m in list_box(archive_of(subscriber))] == ["doc of h.owner is at revision 1"]


def test_a_fresh_publisher_replays_into_the_same_file(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog)
    advance(owner, "v1")
    cycle(publisher_over(catalog, clock))
    restarted = publisher_over(catalog, clock)  # a new supervisor: nothing in memory
    cycle(restarted)
    assert len(list_inbox(subscriber)) == 1
    assert restarted.outcomes[-1][2] is None  # settled as published: the ring deduplicated it


def test_a_flush_never_hands_off_a_subscription_whose_publication_is_outstanding(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog)
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock)
    publisher.flush()
    assert publisher.slot(KEY).phase is Phase.OUTSTANDING and publisher._work.qsize() == 1
    advance(owner, "v2")
    publisher.flush()
    publisher.flush()
    assert publisher._work.qsize() == 1  # still the one outstanding publication
    assert publisher.slot(KEY).reservation.revision == 1
    assert publisher.publish_handed() == 1
    assert cycle(publisher) == 1  # only then is revision 2 captured
    assert [m.subject for m in list_inbox(subscriber)] == ["doc of h.owner is at revision 2"]


def test_deactivation_drops_only_that_recipients_queued_publication(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog)
    other = seat(catalog, "h", "other", '    stream "changes"\n')
    advance(owner, "v1")
    key_other = Key("h.other", OWNER, "doc", "changes")
    publisher = publisher_over(catalog, clock, Entry(KEY, SUBSCRIBER, True), Entry(key_other, "h.other", True))
    clock.advance(0)
    publisher.flush()
    # Both are handed off; make them queued again by a retryable refusal, as after a held lock.
    for item in [publisher._work.get_nowait(), publisher._work.get_nowait()]:
        publisher._settle(item[0], item[2], Refusal.RETRY)
    assert {publisher.slot(KEY).phase, publisher.slot(key_other).phase} == {Phase.QUEUED}
    publisher.refresh([Entry(KEY, SUBSCRIBER, False), Entry(key_other, "h.other", True)])
    assert publisher.slot(KEY).phase is Phase.IDLE and publisher.slot(KEY).reservation is None
    assert publisher.slot(key_other).phase is Phase.QUEUED
    clock.advance(5)
    assert cycle(publisher) == 1
    assert list_inbox(subscriber) == [] and len(list_inbox(other)) == 1


def test_a_refresh_drops_a_queued_publication_for_a_subscription_it_removed(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog)
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock)
    publisher.flush()
    item = publisher._work.get_nowait()
    publisher._settle(item[0], item[2], Refusal.RETRY)
    publisher.refresh([])
    assert publisher.slot(KEY) is None
    clock.advance(5)
    assert cycle(publisher) == 0 and list_inbox(subscriber) == []
    # and an outstanding one removed meanwhile is forgotten when it settles
    publisher.refresh([Entry(KEY, SUBSCRIBER, True)])
    publisher.flush()
    publisher.refresh([])
    assert publisher.publish_handed() == 1 and publisher.slot(KEY) is None


def test_a_not_running_recipient_parks_its_reservation_and_is_attempted_once(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog, subscriber_state="suspended")
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock)  # the pass still carried it running: a race
    assert cycle(publisher) == 1
    assert publisher.slot(KEY).phase is Phase.PARKED
    advance(owner, "v2")
    for _ in range(3):
        clock.advance(60)
        assert cycle(publisher) == 0  # parked: nothing captured, nothing scheduled
    assert [outcome[2] for outcome in publisher.outcomes] == [Refusal.PARK]
    assert list_inbox(subscriber) == []


def test_a_parked_reservation_re_arms_and_replays_when_its_recipient_runs_again(catalog: Path, clock: FakeClock) -> None:
    owner, subscriber = fleet(catalog, subscriber_state="suspended")
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock)
    cycle(publisher)
    parked = publisher.slot(KEY).reservation
    advance(owner, "v2")
    publisher.refresh([Entry(KEY, SUBSCRIBER, False)])  # the next pass: still not running
    assert publisher.slot(KEY).phase is Phase.PARKED
    fleet(catalog)  # resumed
    publisher.refresh([Entry(KEY, SUBSCRIBER, True)])
    assert publisher.slot(KEY).phase is Phase.QUEUED and publisher.slot(KEY).reservation == parked
    assert cycle(publisher) == 1
    [message] = list_inbox(subscriber)
    assert message.body == parked.body and message.subject == "doc of h.owner is at revision 1"  # the exact bytes
    assert cycle(publisher) == 1  # then the transition that happened meanwhile
    assert [m.subject for m in list_inbox(subscriber)] == ["doc of h.owner is at revision 2"]


@pytest.mark.parametrize("case", ["undeclared-stream", "ambiguous", "foreign-host"])
def test_a_permanently_refused_reservation_is_dropped_and_not_recaptured(catalog: Path, clock: FakeClock, case) -> None:
    owner, subscriber = fleet(catalog)
    entry = {"undeclared-stream": Entry(KEY._replace(stream="nope"), SUBSCRIBER, True),
             "ambiguous": Entry(KEY, "twin", True),
             "foreign-host": Entry(KEY, "k.far", True)}[case]
    seat(catalog, "h", "twin", '    stream "changes"\n')
    seat(catalog, "k", "twin", '    stream "changes"\n')
    seat(catalog, "k", "far", '    stream "changes"\n')
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock, entry)
    assert cycle(publisher) == 1
    slot = publisher.slot(entry.key)
    assert slot.phase is Phase.IDLE and slot.reservation is None and slot.baseline.startswith("h.owner/doc@1:")
    for _ in range(3):
        clock.advance(60)
        assert cycle(publisher) == 0  # the same transition is not re-captured
    assert [outcome[2] for outcome in publisher.outcomes] == [Refusal.PERMANENT]
    advance(owner, "v2")
    assert cycle(publisher) == 1  # a new transition is a new attempt


@pytest.mark.parametrize("case, refusal", [
    ("running", None),
    ("suspended", Refusal.PARK),
    ("undeclared-stream", Refusal.PERMANENT),
    ("ambiguous", Refusal.PERMANENT),
    ("foreign-host", Refusal.PERMANENT),
    ("absent-declaration", Refusal.RETRY),
    ("held-ring-lock", Refusal.RETRY),
])
def test_refusals_are_classified_by_what_could_admit_them_later(catalog: Path, clock: FakeClock, case, refusal,
                                                                monkeypatch) -> None:
    from st2.bus import stream
    from st2.fs import lock

    owner, subscriber = fleet(catalog, subscriber_state="suspended" if case == "suspended" else "running")
    seat(catalog, "h", "twin", '    stream "changes"\n')
    seat(catalog, "k", "twin", '    stream "changes"\n')
    seat(catalog, "k", "far", '    stream "changes"\n')
    recipient = {"ambiguous": "twin", "foreign-host": "k.far", "absent-declaration": "h.ghost"}.get(case, SUBSCRIBER)
    key = KEY._replace(stream="nope") if case == "undeclared-stream" else KEY
    advance(owner, "v1")
    publisher = publisher_over(catalog, clock, Entry(key, recipient, True))
    publisher.flush()
    item = publisher._work.get_nowait()
    if case == "held-ring-lock":
        monkeypatch.setattr(lock, "DEFAULT_TIMEOUT_SECONDS", 0.2)
        monkeypatch.setattr(stream, "record_lock", lambda path: lock.RecordLock(lock.lock_path_for(path), 0.2))
        ring = stream.ring_path(catalog, _seat_of(catalog), "changes")
        ring.parent.mkdir(parents=True)
        with lock.record_lock(ring):
            assert publisher.publish(*item) is refusal
        return
    assert publisher.publish(*item) is refusal


def _seat_of(catalog: Path):
    from st2.bus.addressing import resolve_seat

    return resolve_seat(catalog, SUBSCRIBER)
