"""The ownership machine: its named edges, its record, and fail-closed decoding."""

from __future__ import annotations

import os
import stat

import pytest

from st2.ding.ownership import (SCHEMA, Event, Head, IllegalTransition, MalformedOwnership, Ownership,
                                OwnershipStore, Phase, decode, encode, transition)

HEAD = Head("message", "[DING] n", ("1796000955039-cjqc1g.md",), "a1b2c3", 42)


def walk(*events) -> Ownership:
    state = Ownership("h.builder", started=True)
    for event in events:
        state = transition(state, event, head=HEAD if event is Event.OWN else None)
    return state


def test_a_delivery_walks_owned_loaded_pasted_submitted_then_settles():
    state = walk(Event.OWN, Event.BUFFER_LOADED, Event.PASTE_LANDED, Event.RETURN_SENT)
    assert (state.phase, state.head.returns) == (Phase.SUBMITTED, 1)
    settled = transition(state, Event.ACCEPTED)
    assert (settled.phase, settled.head, settled.settled) == (Phase.IDLE, None, ("1796000955039-cjqc1g.md",))


@pytest.mark.parametrize("events, illegal", [
    ((), Event.BUFFER_LOADED),                                   # nothing owned
    ((Event.OWN,), Event.PASTE_LANDED),                          # no paste before the buffer is loaded
    ((Event.OWN,), Event.ACCEPTED),                              # nothing pasted: nothing to accept
    ((Event.OWN, Event.BUFFER_LOADED), Event.RETURN_SENT),       # no Return before the paste landed
    ((Event.OWN, Event.BUFFER_LOADED, Event.PASTE_LANDED), Event.BUFFER_LOADED),  # never a second paste
    ((Event.OWN, Event.BUFFER_LOADED, Event.PASTE_LANDED, Event.RETURN_SENT, Event.RETURN_SENT), Event.RETURN_SENT),
    ((), Event.RELEASED),
])
def test_unnamed_edges_are_refused(events, illegal):
    with pytest.raises(IllegalTransition):
        transition(walk(*events), illegal, head=HEAD)


def test_one_retry_return_is_allowed_and_no_more():
    state = walk(Event.OWN, Event.BUFFER_LOADED, Event.PASTE_LANDED, Event.RETURN_SENT, Event.RETURN_SENT)
    assert state.head.returns == 2


def test_a_replaced_terminal_reowns_with_a_new_token():
    state = walk(Event.OWN, Event.BUFFER_LOADED, Event.PASTE_LANDED)
    moved = transition(state, Event.TERMINAL_REPLACED, terminal=99)
    assert (moved.phase, moved.head.terminal, moved.head.returns) == (Phase.OWNED, 99, 0)
    assert moved.head.token != HEAD.token


def test_settling_the_backlog_clears_it():
    backlog = Head("backlog", "[DING] unread st2 messages remain; check your inbox", ("a", "b"), "ffff")
    state = Ownership("h.builder", backlog=("a", "b"), started=True)
    state = transition(transition(transition(transition(state, Event.OWN, head=backlog), Event.BUFFER_LOADED),
                                  Event.PASTE_LANDED), Event.ACCEPTED)
    assert (state.backlog, state.settled) == ((), ("a", "b"))


def test_record_round_trips_as_a_pinned_shape():
    state = walk(Event.OWN, Event.BUFFER_LOADED)
    assert encode(state) == (
        b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "loaded", '
        b'"head": {"kind": "message", "notice": "[DING] n", "filenames": ["1796000955039-cjqc1g.md"], '
        b'"token": "a1b2c3", "terminal": 42, "returns": 0}, "settled": [], "backlog": []}\n')
    assert decode(encode(state), "h.builder") == state


@pytest.mark.parametrize("data", [
    b"", b"not json", b"[]", b'{"schema": "other"}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.other", "started": true, "phase": "idle", "head": null, "settled": [], "backlog": []}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "pasted", "head": null, "settled": [], "backlog": []}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "sideways", "head": null, "settled": [], "backlog": []}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "idle", "head": null, "settled": [1], "backlog": []}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "pasted", "head": {"kind": "message", "notice": "n", "filenames": [], "token": "../x", "terminal": null, "returns": 0}, "settled": [], "backlog": []}',
    b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "pasted", "head": {"kind": "message", "notice": "n", "filenames": [], "token": "ab", "terminal": null, "returns": 3}, "settled": [], "backlog": []}',
])
def test_malformed_records_are_refused_not_guessed(data):
    with pytest.raises(MalformedOwnership):
        decode(data, "h.builder")


def test_the_well_formed_twin_decodes():
    data = (b'{"schema": "st2.ding-ownership.v1", "target": "h.builder", "started": true, "phase": "pasted", '
            b'"head": {"kind": "message", "notice": "n", "filenames": [], "token": "ab", "terminal": null, '
            b'"returns": 2}, "settled": [], "backlog": []}')
    assert decode(data, "h.builder").phase is Phase.PASTED


def test_store_publishes_owner_only_outside_the_seat(tmp_path):
    store = OwnershipStore(tmp_path / "scope" / "ding", tmp_path / "scope" / "staging", "h.builder")
    assert store.load() is None
    store.save(walk(Event.OWN))
    assert store.load() == walk(Event.OWN)
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert os.listdir(tmp_path / "scope" / "staging") == []
    assert SCHEMA in store.path.read_text()
