"""The resource state record: its pinned wire shape, its reader (malformed reads absent) and its
one writer (locked read-modify-write, monotonic stamps, staged outside the seat)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from st2.resources import state

AGENT = "host.worker"
FACTS = {"branch": "main", "dirty": False, "ahead": 2}
DIGEST = state.digest_facts(FACTS)


@pytest.fixture
def seat(catalog: Path) -> Path:
    directory = catalog / "agents" / "host" / "worker"
    directory.mkdir(parents=True)
    return directory


def a_state(**changes) -> state.State:
    base = state.State(AGENT, "repo", "git:///srv/repo", 2, 1, DIGEST, 1_788_000_000_000, FACTS,
                       None, 1_788_000_000_001)
    return base._replace(**changes)


def test_the_wire_shape_is_pinned_as_a_full_string() -> None:
    failed = a_state(last_failure=state.Failure("timeout", "no result in 30s", 1_788_000_000_500))
    assert state.encode(failed) == (
        '{"schema":"st2.resource-state.v1","agent":"host.worker","binding":"repo","uri":"git:///srv/repo",'
        '"generation":2,"revision":1,"hostDigest":"' + DIGEST + '","hostObservedAtMs":1788000000000,'
        '"facts":{"branch":"main","dirty":false,"ahead":2},'
        '"lastFailure":{"kind":"timeout","message":"no result in 30s","atMs":1788000000500},'
        '"writtenAtMs":1788000000001}\n').encode()
    assert DIGEST == "sha256:" + __import__("hashlib").sha256(b'{"ahead":2,"branch":"main","dirty":false}').hexdigest()


def test_a_record_round_trips_and_names_its_seat_and_binding() -> None:
    data = state.encode(a_state())
    assert state.read(data, AGENT, "repo") == a_state()
    assert state.read(data, "host.other", "repo") is None
    assert state.read(data, AGENT, "other") is None
    assert state.read(None, AGENT, "repo") is None


@pytest.mark.parametrize("mutation", [
    lambda text: text.replace("resource-state.v1", "resource-state.v2"),
    lambda text: text.replace('"dirty":false', '"dirty":1.5'),
    lambda text: text.replace('"dirty":false', '"dirty":[1]'),
    lambda text: text.replace('"revision":1', '"revision":-1'),
    lambda text: text.replace('"revision":1', '"revision":0'),
    lambda text: text.replace('"ahead":2', '"ahead":3'),           # the digest no longer matches the facts
    lambda text: text.replace('"lastFailure":null', '"lastFailure":{"kind":"bogus","message":"","atMs":1}'),
    lambda text: text.replace('"agent"', '"agent":"x","agent"'),    # a duplicate field
    lambda text: text[:-10],
    lambda text: "\xff" + text,
])
def test_malformed_bytes_read_as_absent(mutation) -> None:
    text = state.encode(a_state()).decode()
    data = mutation(text).encode("utf-8", "surrogateescape")
    assert state.read(data, AGENT, "repo") is None


def test_a_never_published_record_carries_only_its_failure() -> None:
    failing = a_state(revision=0, host_digest=None, facts={}, host_observed_at_ms=None,
                      last_failure=state.Failure("unavailable", "no provider", 5))
    assert state.read(state.encode(failing), AGENT, "repo") == failing


def test_facts_are_bounded_flat_typed_scalars() -> None:
    assert state.check_facts({"a": None, "b": "x", "c": True, "d": -5}) == {"a": None, "b": "x", "c": True, "d": -5}
    for facts, fault in [([], "not an object"), ({"a": 1.5}, "not a string"), ({"a": {"b": 1}}, "not a string"),
                         ({"1a": 1}, "fact name"), ({"a": 2**63}, "64-bit"),
                         ({f"f{index}": 1 for index in range(65)}, "bound of 64"),
                         ({"a": "x" * (64 * 1024)}, "payload bound of 65536")]:
        with pytest.raises(state.FactsRefused, match=fault):
            state.check_facts(facts)


def test_the_writer_publishes_under_the_seat_tree_and_stamps_monotonically(seat: Path, catalog: Path) -> None:
    first = state.update(seat, AGENT, "repo", lambda current: a_state(written_at_ms=0), now_ms=1_000)
    assert first.written_at_ms == 1_000
    again = state.update(seat, AGENT, "repo", lambda current: current._replace(revision=current.revision), now_ms=900)
    assert again.written_at_ms == 1_001  # the clock went back; the stamp did not
    assert state.read_file(seat, AGENT, "repo") == again
    assert sorted(os.listdir(seat)) == ["resource-state"]
    assert sorted(os.listdir(seat / "resource-state")) == ["repo.json"]  # no lock, no temp inside the seat
    assert sorted(os.listdir(catalog / ".st2" / "resource-state-staging")) == [".host.worker.repo.lock"]
    assert state.read_all(seat, AGENT) == {"repo": again}


def test_a_change_returning_none_leaves_the_record(seat: Path) -> None:
    assert state.update(seat, AGENT, "repo", lambda current: None, now_ms=1) is None
    assert not (seat / "resource-state").exists()


def test_the_writer_refuses_a_record_for_another_seat_or_a_bad_name(seat: Path) -> None:
    with pytest.raises(ValueError):
        state.update(seat, AGENT, "repo", lambda current: a_state(agent="host.other"), now_ms=1)
    with pytest.raises(ValueError):
        state.path(seat, "../escape")


def test_an_unreadable_record_reads_absent(seat: Path) -> None:
    (seat / "resource-state").mkdir()
    os.mkfifo(seat / "resource-state" / "repo.json")
    assert state.read_file(seat, AGENT, "repo") is None
    assert state.read_all(seat, AGENT) == {}
