"""`st2 top` shows the relaunch queue (st2.accounts.admission): a queued agent task's trouble word
is its place, and one line per frame counts each account's waiting seats and says when the next starts."""

from __future__ import annotations

from types import SimpleNamespace

from st2.top.model import relaunch_queue_line, task_trouble

NOW_MS = 1_788_000_000_000


def task(admission=None, state: str = "absent") -> dict:
    return {"task": "agent", "desiredState": "running", "runtime": {"state": state}, "parked": None,
            "admission": admission}


def test_a_queued_task_reads_as_its_place_in_the_queue_and_an_unqueued_one_as_before() -> None:
    assert task_trouble(task({"account": "main", "position": 3, "startsAt": NOW_MS})) == "queued#3"
    assert task_trouble(task()) == "absent"
    assert task_trouble(task(state="running")) is None


def test_the_queue_line_counts_each_accounts_waiting_seats_and_the_next_start() -> None:
    seats = [SimpleNamespace(tasks=[task({"account": "main", "position": 2, "startsAt": NOW_MS + 4500})]),
             SimpleNamespace(tasks=[task({"account": "main", "position": 1, "startsAt": NOW_MS + 1500}), task()]),
             SimpleNamespace(tasks=[task({"account": "spare", "position": 1, "startsAt": NOW_MS - 10})])]
    assert relaunch_queue_line(seats, NOW_MS) == "relaunch queue: main 2 (next in 2s), spare 1 (next in 0s)"
    assert relaunch_queue_line([SimpleNamespace(tasks=[task()])], NOW_MS) is None
