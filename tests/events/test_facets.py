"""Which value changes are transitions (unit tier): every kind's firing and non-firing cases."""

from __future__ import annotations

import pytest

from st2.events import facets
from st2.events.facets import Facet, changed, diff


@pytest.mark.parametrize("kind, old, new, fires", [
    ("blocked", "none", "human", True), ("blocked", "human", "unknown", True), ("blocked", None, "human", True),
    ("blocked", "none", "unknown", False), ("blocked", "human", "human", False),
    ("context", 79.9, 80.0, True), ("context", 85.0, 20.0, True), ("context", None, 81.0, True),
    ("context", 81.0, 99.0, False), ("context", 10.0, 79.0, False), ("context", 81.0, 81.0, False),
    ("compaction", 1, 2, True), ("compaction", 2, 0, False), ("compaction", None, 3, False), ("compaction", 2, 2, False),
    ("pause", "OK", "PAUSE", True), ("pause", "PAUSE", "STALE", True), ("pause", "OK", "RESET-OK", False),
    ("usage-stale", "OK", "STALE", True), ("usage-stale", "STALE", "STALE", False), ("usage-stale", "OK", "PAUSE", False),
    ("diagnostic", "absent", "failure", True), ("diagnostic", "failure", "indeterminate", True),
    ("diagnostic", "failure", "absent", True), ("diagnostic", "failure", "failure", False),
    ("diagnostic", None, "failure", False),
    ("stale", "fresh", "stale", True), ("stale", "stale", None, True), ("stale", "stale", "stale", False),
    ("stale", None, "fresh", False),
    ("parked", None, "crash-loop", True), ("parked", "parked", None, True), ("parked", "parked", "parked", False),
])
def test_a_transition_is_a_change_of_class_never_of_stamp_or_restated_value(kind, old, new, fires):
    assert changed(kind, old, new) is fires


def test_a_diff_is_at_most_one_event_per_key_in_key_order():
    key = facets.key("blocked", "h.a")
    current = {key: Facet("human", {"state": "active"}, 5), facets.key("context", "h.a"): Facet(50.0, {}, 5)}
    events = diff({key: "none", facets.key("context", "h.a"): 40.0}, current, 100)
    assert [(item.kind, item.from_value, item.to_value, item.observed_at_ms) for item in events] == [
        ("blocked", "none", "human", 100)]
    assert diff({key: "human"}, current, 100) == []


def test_a_cleared_park_names_its_task_with_no_reason():
    gone = facets.key("parked", "h.a", "h.a.job")
    [event] = diff({gone: "crash-loop"}, {}, 100)
    assert (event.to_value, event.evidence) == (None, {"task": "h.a.job", "reason": None, "parkedAtMs": None,
                                                       "attempts": None})


def test_a_park_for_exiting_past_its_policy_is_a_crash_loop():
    assert facets.park_word("exited 3 times within 60s (restart mode fail)") == "crash-loop"
    assert facets.park_word("socket path too long") == "parked"
