"""The reader's side of ``st2 events``: print the journal once, follow it, or — with no journal
on this host — print what the current records alone prove (:func:`st2.events.facets.proved`)."""

from __future__ import annotations

import os
import selectors
from pathlib import Path
from typing import Callable, TextIO

from st2.catalog.location import CatalogLocation
from st2.events import facets, journal
from st2.events.event import FleetEvent
from st2.fs.watch import MutationWatch
from st2.runtime.scope import RuntimeScope

FOLLOW_POLL_SECONDS = 1.0  # the follower's timer: a missed or unavailable watch costs at most this


def printer(as_json: bool, seat_host: str | None, since_ms: int | None, output: TextIO) -> Callable[[FleetEvent], None]:
    """A function printing one event if it passes the filters (flushing each line)."""
    def show(item: FleetEvent) -> None:
        if since_ms is not None and item.observed_at_ms < since_ms:
            return
        if seat_host is not None and item.seat is not None and item.seat.split(".", 1)[0] != seat_host:
            return
        output.write((item.line() if as_json else item.human()) + "\n")
        output.flush()
    return show


def print_once(location: CatalogLocation, show, errors: TextIO, park_reader=None, now_ms: int | None = None) -> int:
    scope = RuntimeScope(location.root, location.host)
    directory = journal.directory_of(scope)
    refused: list[str] = []
    if journal.exists(directory):
        events = journal.read_all(directory, refused)
        for problem in refused:
            errors.write(f"st2 events: the event journal {problem}; it is not read\n")
        if not refused or len(refused) < journal.segments_present(directory):
            for item in events:
                show(item)
            return 0
    if refused:
        errors.write(f"st2 events: no readable event journal for {location.host}; "
                     "showing only what the current records prove\n")
    else:
        errors.write(f"st2 events: no event journal for {location.host} (`st2 up` writes it); "
                     "showing only what the current records prove\n")
    from st2.base.clock import command_clock
    from st2.events.projection import FleetProjection

    if park_reader is None:
        park_reader = _no_parks
    now_ms = command_clock().wall_ms() if now_ms is None else now_ms
    groups = FleetProjection(location, scope, park_reader).everything(now_ms)
    current = {key: facet for group in groups.values() for key, facet in group.items()}
    for item in facets.proved(current, now_ms):
        show(item)
    return 0


def _no_parks(scope, task):
    return None


def follow(location: CatalogLocation, show, since_ms: int | None, errors: TextIO,
           stop: Callable[[], bool] = lambda: False) -> int:
    """Print the journal's events as they are appended (after the backlog since ``since_ms``
    when given), until interrupted."""
    scope = RuntimeScope(location.root, location.host)
    directory = journal.directory_of(scope)
    follower = journal.Follower(directory)
    follower.start_at_end()
    if since_ms is not None:
        for item in journal.read_all(directory):
            if item.seq <= follower.after:
                show(item)
    watch = MutationWatch()
    selector = selectors.DefaultSelector()
    if watch.active:
        selector.register(watch.fileno(), selectors.EVENT_READ)
    try:
        while not stop():
            _watch_nearest(watch, directory)
            lost = follower.lost
            for item in follower.poll():
                show(item)
            if follower.lost > lost:
                errors.write(f"st2 events: fell behind the journal's rotation; {follower.lost - lost} event(s) "
                             "were dropped before this reader read them\n")
                errors.flush()
            selector.select(FOLLOW_POLL_SECONDS)
            watch.events()
    except KeyboardInterrupt:
        return 0
    finally:
        selector.close()
    return 0


def _watch_nearest(watch: MutationWatch, directory: Path) -> None:
    """Watch the journal directory, or its nearest existing ancestor until it exists."""
    if not watch.active or watch.watching(directory):
        return
    path = directory
    while not path.is_dir() and path.parent != path:
        path = path.parent
    for watched in [watched for watched in watch.by_path if watched != path]:
        watch.remove(watched)
    watch.add(path, "journal")
