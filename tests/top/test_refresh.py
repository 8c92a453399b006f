"""What the live view re-reads: a seat's record write is that seat alone; its declaration
rewritten is that seat and the task inventory (the view reads the inventory without its own
second pass over the catalog, so a declaration's change must reach it through the watch)."""

from __future__ import annotations

import os
from pathlib import Path

from support import poll_for
from st2.top.refresh import FleetWatch


def drained(watch: FleetWatch):
    found = []

    def ready():
        changes = watch.drain()
        if changes:
            found.append(changes)
        return found
    poll_for(ready, "the watch's events", timeout=10)
    return found[0]


def test_a_rewritten_declaration_reads_the_seat_and_the_task_inventory_again(tmp_path: Path) -> None:
    seat = tmp_path / "agents" / "alpha" / "builder"
    seat.mkdir(parents=True)
    watch = FleetWatch()
    assert watch.active
    watch.watch_seat("alpha.builder", seat)
    for name, tasks in (("harness-state", False), ("agent.kdl", True)):
        (tmp_path / "staged").write_text("{}\n")
        os.replace(tmp_path / "staged", seat / name)
        changes = drained(watch)
        assert (changes.seats, changes.tasks) == ({"alpha.builder"}, tasks), name
