"""Mutation-only filesystem wake-ups and prompt catalog convergence (process tier, real
inotify). Passes are counted through the supervisor's own sd_notify STATUS lines, sent to a
NOTIFY_SOCKET the test owns."""

from __future__ import annotations

import functools
import operator
import os
import select
import subprocess

import pytest

from supervisor_support import poll_for
from st2.catalog.location import CatalogLocation
from st2.base.clock import SYSTEM_CLOCK
from st2.supervisor import loop
from st2.supervisor.reconcile import Reconciler
from st2.fs.watch import MUTATION_MASK
from st2.supervisor.watch import CatalogWatch


def mask_events(mask: int, directory, act) -> int:
    """The union of inotify event bits a real watch with ``mask`` on ``directory`` reports for
    ``act()`` (0 when none)."""
    from inotify_simple import INotify

    with INotify() as notify:
        notify.add_watch(str(directory), mask)
        act()
        return functools.reduce(operator.or_, (event.mask for event in notify.read(timeout=0)), 0)


@pytest.mark.process
def test_the_watch_mask_subscribes_to_mutations_only(tmp_path):
    from inotify_simple import flags

    assert MUTATION_MASK == (flags.CREATE | flags.MODIFY | flags.CLOSE_WRITE | flags.MOVED_FROM
                             | flags.MOVED_TO | flags.DELETE | flags.DELETE_SELF | flags.MOVE_SELF)
    assert MUTATION_MASK & (flags.ACCESS | flags.OPEN | flags.CLOSE_NOWRITE) == 0
    target = tmp_path / "agent.kdl"
    target.write_text("old\n")
    # Each mutation of a watched directory reports through the real mask; a read reports nothing.
    assert mask_events(MUTATION_MASK, tmp_path, target.read_bytes) == 0
    assert mask_events(MUTATION_MASK, tmp_path, lambda: target.write_text("new\n")) & flags.MODIFY
    assert mask_events(MUTATION_MASK, tmp_path, lambda: (tmp_path / "x").write_text("")) & flags.CREATE
    staged = tmp_path / ".agent.kdl.tmp"
    staged.write_text("renamed\n")
    assert mask_events(MUTATION_MASK, tmp_path, lambda: os.replace(staged, target)) & flags.MOVED_TO
    assert mask_events(MUTATION_MASK, tmp_path, target.unlink) & flags.DELETE


@pytest.mark.process
def test_an_idle_supervisor_is_not_woken_by_reads_but_a_renamed_declaration_launches_at_once(fleet, listener):
    fleet.seat("one", '    argv "sleep" "600"')
    fleet.up("--interval", "60s")
    assert poll_for(lambda: listener.passes() >= 1, timeout=20), fleet.log()
    assert "READY=1" in listener.collect()
    # Reads of everything the supervisor watches (and its own reads each pass) wake nothing.
    for _ in range(5):
        for path in fleet.catalog.rglob("*"):
            if path.is_file():
                path.read_bytes()
            else:
                os.listdir(path)
        assert fleet.st2("tasks", "--json").returncode == 0
    # Unrelated mutations in a seat directory (presence, mail) are dropped without a pass.
    (fleet.catalog / "agents" / "h" / "one" / "status").write_text("busy\n")
    listener.settle(fleet.catalog / "agents" / "h" / "one" / "status")
    assert listener.passes() == 1, listener.collect()

    # A whole new seat published by atomic rename wakes one pass that launches it.
    staged = fleet.base / "staged-seat"
    staged.mkdir()
    (staged / "agent.kdl").write_text('agent "two" {\n    argv "sleep" "600"\n}\n')
    os.rename(staged, fleet.catalog / "agents" / "h" / "two")
    assert poll_for(lambda: "h.two" in fleet.running(), timeout=10), fleet.log()
    assert poll_for(lambda: listener.passes() >= 2, timeout=10)
    assert listener.passes() <= 3

    # A declaration rewritten in place by rename (the catalog writers' way) wakes a pass too.
    before = listener.passes()
    fleet.seat("two", '    desired-state "suspended" reason="testing"\n    argv "sleep" "600"')
    assert poll_for(lambda: "h.two" not in fleet.running(), timeout=10), fleet.log()
    assert poll_for(lambda: listener.passes() > before, timeout=10)


@pytest.mark.process
def test_a_catalog_generation_commit_wakes_the_supervisor(fleet, listener):
    fleet.seat("one", '    argv "sleep" "600"')
    fleet.up("--interval", "60s")
    assert poll_for(lambda: listener.passes() >= 1, timeout=20), fleet.log()
    control = fleet.catalog / ".st2"
    control.mkdir(exist_ok=True)
    listener.settle(fleet.catalog / "agents" / "h" / "one" / "status")
    before = listener.passes()
    staged = fleet.base / "generation.tmp"
    staged.write_text("2\n")
    os.replace(staged, control / "catalog-generation")
    assert poll_for(lambda: listener.passes() > before, timeout=10)


def test_a_failed_watch_installation_leaves_the_timer_working(fleet, monkeypatch):
    def refuse(*arguments, **keywords):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr("st2.fs.watch.INotify", refuse)
    location = CatalogLocation(fleet.catalog, "h")
    watch = CatalogWatch(location, fleet.scope)
    assert not watch.active and "interval timer" in watch.error
    watch.sync()
    assert watch.drain() is False
    read_end, write_end = os.pipe()
    try:
        reconciler = Reconciler(location, scope=fleet.scope, output=open(os.devnull, "w"))
        start = SYSTEM_CLOCK.monotonic()
        stop = loop._wait(reconciler, watch, [], read_end, 0.3, None, SYSTEM_CLOCK, loop.Notifier())
        assert stop is False                       # the timer came due: run a pass
        assert SYSTEM_CLOCK.monotonic() - start >= 0.3
    finally:
        os.close(read_end)
        os.close(write_end)


def _wait_once(fleet, watch, interval: float) -> float:
    """Seconds one real ``loop._wait`` took with ``watch``: well under ``interval`` when a
    channel woke it, ``interval`` when only the timer did."""
    read_end, write_end = os.pipe()
    try:
        reconciler = Reconciler(CatalogLocation(fleet.catalog, "h"), scope=fleet.scope, output=open(os.devnull, "w"))
        start = SYSTEM_CLOCK.monotonic()
        assert loop._wait(reconciler, watch, [], read_end, interval, None, SYSTEM_CLOCK, loop.Notifier()) is False
        return SYSTEM_CLOCK.monotonic() - start
    finally:
        os.close(read_end)
        os.close(write_end)


@pytest.mark.parametrize("lost", CatalogWatch.CHANNELS)
def test_either_watch_channel_failing_leaves_the_other_and_the_timer(fleet, monkeypatch, lost):
    from inotify_simple import INotify

    made = iter(CatalogWatch.CHANNELS)                 # the channels are set up in this order

    def refuse_one(*arguments, **keywords):
        if next(made) == lost:
            raise OSError(24, "Too many open files")
        return INotify(*arguments, **keywords)

    fleet.seat("one", '    argv "sleep" "600"')
    (fleet.catalog / ".st2").mkdir()
    monkeypatch.setattr("st2.fs.watch.INotify", refuse_one)
    watch = CatalogWatch(CatalogLocation(fleet.catalog, "h"), fleet.scope)
    assert watch.active and f"{lost} (" in watch.error and "the other channel and the interval timer" in watch.error
    watch.sync()
    assert _wait_once(fleet, watch, 0.3) >= 0.3        # nothing changed: the timer still comes due

    staged = fleet.base / "generation.tmp"
    staged.write_text("2\n")
    os.replace(staged, fleet.catalog / ".st2" / "catalog-generation")
    if lost == "generation":
        assert watch.drain() is False
    else:
        assert _wait_once(fleet, watch, 10) < 5
    fleet.seat("one", '    argv "sleep" "601"')        # a declaration rewritten by atomic rename
    if lost == "declarations":
        assert watch.drain() is False
    else:
        assert _wait_once(fleet, watch, 10) < 5
