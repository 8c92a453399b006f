"""Replicated-path discipline: the pinned record names, every reader path derived from them, and
no staging name ever created inside the replicated subtree (a recursive inotify watch over the
seat during 1,000 real writes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from inotify_simple import INotify, flags

from st2.catalog import layout
from st2.base.clock import FakeClock
from st2.fs.atomic import publish
from st2.records import driver_diagnostic, harness_context, harness_state, status
from st2.resources import state as resource_state

CANONICAL = {"status", "harness-state", "harness-context", "driver-diagnostic"}
LOCKS = {".status.lock", ".harness-state.lock", ".harness-context.lock"}


def test_the_pinned_replicated_names_are_exactly_the_transport_contract() -> None:
    assert layout.REPLICATED_NAMES == ("resources", "status", "harness-state", "harness-context", "resource-state")
    assert layout.REPLICATED_TREES == ("resources", "resource-state")
    assert layout.sync_include_rules() == ["**/resources/**", "**/status", "**/harness-state", "**/harness-context",
                                           "**/resource-state/**"]


def test_every_replicated_record_reader_derives_its_name_from_the_pinned_list() -> None:
    assert (status.RECORD_NAME, harness_state.RECORD_NAME, harness_context.RECORD_NAME, resource_state.TREE_NAME) == (
        layout.STATUS, layout.HARNESS_STATE, layout.HARNESS_CONTEXT, layout.RESOURCE_STATE)
    assert {status.RECORD_NAME, harness_state.RECORD_NAME, harness_context.RECORD_NAME,
            resource_state.TREE_NAME} <= set(layout.REPLICATED_NAMES)
    assert driver_diagnostic.RECORD_NAME not in layout.REPLICATED_NAMES  # host-local, never replicated


def test_harness_context_stages_in_the_pinned_control_plane_directory() -> None:
    assert harness_context.STAGING_NAME == layout.HARNESS_CONTEXT_STAGING == "harness-context-staging"


class Watch:
    """A recursive inotify watch over a directory tree, recording every entry name it sees."""

    MASK = flags.CREATE | flags.MOVED_TO | flags.MOVED_FROM | flags.DELETE | flags.MODIFY | flags.CLOSE_WRITE | flags.ATTRIB

    def __init__(self, root: Path) -> None:
        self.inotify = INotify()
        self.names: set[str] = set()
        self.overflowed = False
        for directory, _, _ in os.walk(root):
            self.inotify.add_watch(directory, self.MASK)

    def drain(self) -> None:
        for event in self.inotify.read(timeout=0):
            if event.mask & flags.Q_OVERFLOW:
                self.overflowed = True
            if event.name:
                self.names.add(event.name)

    def close(self) -> None:
        self.inotify.close()


@pytest.fixture
def seat(fast_catalog: Path) -> Path:
    directory = fast_catalog / "agents" / "host" / "worker"
    (directory / "resources" / "inbox").mkdir(parents=True)
    (directory / "resources" / "archive").mkdir()
    return directory


@pytest.mark.process
def test_a_thousand_writes_create_only_canonical_names_and_locks_inside_the_seat(seat: Path, clock: FakeClock) -> None:
    watch = Watch(seat)
    try:
        context = harness_context.Writer(seat, "host.worker", "claude", "session", clock)
        token = "session"
        sequence = harness_state.claim(seat, "host.worker", "claude", token, clock)
        state = harness_state.Writer(seat, "host.worker", "claude", clock, pty_session="host.worker",
                                     incarnation=token, claimed_seq=sequence)
        diagnostics = driver_diagnostic.Publisher(seat, "claude", clock)
        for index in range(1_000):
            clock.advance(1)
            kind = index % 5
            if kind in (0, 1):
                assert context.publish(harness_context.Reading(used_percent=float(index % 100)),
                                       harness_context.CompactionEdge("auto") if kind else None)
            elif kind == 2:
                assert state.observe("active" if index % 2 else "idle")
            elif kind == 3:
                status.write(seat, "busy" if index % 2 else "available", clock)
            else:
                diagnostics.publish("providerAuth", "providerAuthRejected", "turnResult")
                diagnostics.clear("providerAuth")
            if index % 50 == 0:
                watch.drain()
        watch.drain()
    finally:
        watch.close()
    assert not watch.overflowed
    assert CANONICAL <= watch.names  # the watch saw the writes: it is not vacuous
    assert watch.names <= CANONICAL | LOCKS, watch.names - CANONICAL - LOCKS


@pytest.mark.process
def test_the_watch_catches_a_sibling_temp_file(seat: Path) -> None:
    watch = Watch(seat)
    try:
        publish(seat / "harness-context", b"{}\n", seat)  # the anti-pattern: staging inside the seat
        watch.drain()
    finally:
        watch.close()
    assert watch.names - CANONICAL - LOCKS  # a staged name was seen
