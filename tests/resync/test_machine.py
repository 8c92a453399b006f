"""The resync subscription machine: every edge of the diagram, and nothing else."""

from __future__ import annotations

import pytest

from st2.resync.machine import EMPTY, Event, IllegalTransition, Phase, Reservation, transition

RESERVED = Reservation(3, "h.owner/doc@3:0123456789ab", "h.owner/doc", "doc of h.owner is at revision 3", "body")


def queued():
    return transition(EMPTY, Event.CAPTURED, reservation=RESERVED)


def outstanding():
    return transition(queued(), Event.DISPATCHED)


def test_each_edge_moves_the_reservation_and_the_baseline_as_drawn() -> None:
    assert queued() == (Phase.QUEUED, None, RESERVED, 0.0)
    assert transition(outstanding(), Event.PUBLISHED) == (Phase.IDLE, RESERVED.event_id, None, 0.0)
    assert transition(outstanding(), Event.REFUSED_PERMANENTLY) == (Phase.IDLE, RESERVED.event_id, None, 0.0)
    assert transition(outstanding(), Event.REFUSED_RETRYABLY, not_before=7.5) == (Phase.QUEUED, None, RESERVED, 7.5)
    parked = transition(outstanding(), Event.RECIPIENT_NOT_RUNNING)
    assert parked == (Phase.PARKED, None, RESERVED, 0.0)
    assert transition(parked, Event.RE_ARMED) == (Phase.QUEUED, None, RESERVED, 0.0)  # the exact reservation
    assert transition(queued(), Event.DEACTIVATED) == (Phase.IDLE, None, None, 0.0)


@pytest.mark.parametrize("slot, event", [
    (EMPTY, Event.DISPATCHED), (EMPTY, Event.PUBLISHED), (EMPTY, Event.RE_ARMED),
    ("queued", Event.CAPTURED), ("queued", Event.PUBLISHED),
    ("outstanding", Event.DISPATCHED), ("outstanding", Event.DEACTIVATED), ("outstanding", Event.CAPTURED),
    ("parked", Event.DISPATCHED), ("parked", Event.DEACTIVATED), ("parked", Event.CAPTURED),
])
def test_an_edge_the_diagram_lacks_is_refused(slot, event) -> None:
    slot = {"queued": queued, "outstanding": outstanding,
            "parked": lambda: transition(outstanding(), Event.RECIPIENT_NOT_RUNNING)}.get(slot, lambda: EMPTY)()
    with pytest.raises(IllegalTransition):
        transition(slot, event)
