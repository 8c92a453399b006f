"""One subscription's publication state machine, and how a refused publication is classified.

States (:class:`Phase`) and the one transition function (:func:`transition`)::

    IDLE ─CAPTURED─► QUEUED ─DISPATCHED─► OUTSTANDING ─PUBLISHED─► IDLE   (baseline := reserved event)
    OUTSTANDING ─REFUSED_PERMANENTLY─► IDLE   (reservation dropped, baseline := reserved event)
    OUTSTANDING ─REFUSED_RETRYABLY─► QUEUED   (the same reservation, not before a backoff)
    OUTSTANDING ─RECIPIENT_NOT_RUNNING─► PARKED   (attempted once; nothing captured or scheduled)
    PARKED ─RE_ARMED─► QUEUED   (a refresh carries the recipient running again: the exact bytes)
    QUEUED ─DEACTIVATED─► IDLE   (the refresh decided the subscriber receives nothing: dropped)

A subscription has at most one reservation, so at most one publication is outstanding for it.
A reservation is the exact event — id, key, subject, body — rendered when the transition was
captured; re-arming never re-renders it.
"""

from __future__ import annotations

import enum
from collections import namedtuple


class Phase(enum.Enum):
    IDLE = "idle"
    QUEUED = "queued"
    OUTSTANDING = "outstanding"
    PARKED = "parked"


class Event(enum.Enum):
    CAPTURED = "captured"
    DISPATCHED = "dispatched"
    PUBLISHED = "published"
    REFUSED_PERMANENTLY = "refused-permanently"
    REFUSED_RETRYABLY = "refused-retryably"
    RECIPIENT_NOT_RUNNING = "recipient-not-running"
    RE_ARMED = "re-armed"
    DEACTIVATED = "deactivated"


class Refusal(enum.Enum):
    """What could admit a refused publication later."""

    PARK = "park"            # the recipient is declared but not running: once it runs again
    PERMANENT = "permanent"  # an ambiguous recipient, a foreign owning host, an undeclared stream: nothing
    RETRY = "retry"          # anything else, an absent declaration included: a later attempt


class Reservation(namedtuple("Reservation", ("revision", "event_id", "key", "subject", "body"))):
    """The exact event one transition publishes."""

    __slots__ = ()


class Slot(namedtuple("Slot", ("phase", "baseline", "reservation", "not_before"))):
    """One subscription: its phase, the event id of the last transition it settled (published or permanently
    refused; None before the first), its reservation and the earliest retry (monotonic seconds)."""

    __slots__ = ()


EMPTY = Slot(Phase.IDLE, None, None, 0.0)

_EDGES = {
    (Phase.IDLE, Event.CAPTURED): Phase.QUEUED,
    (Phase.QUEUED, Event.DISPATCHED): Phase.OUTSTANDING,
    (Phase.OUTSTANDING, Event.PUBLISHED): Phase.IDLE,
    (Phase.OUTSTANDING, Event.REFUSED_PERMANENTLY): Phase.IDLE,
    (Phase.OUTSTANDING, Event.REFUSED_RETRYABLY): Phase.QUEUED,
    (Phase.OUTSTANDING, Event.RECIPIENT_NOT_RUNNING): Phase.PARKED,
    (Phase.PARKED, Event.RE_ARMED): Phase.QUEUED,
    (Phase.QUEUED, Event.DEACTIVATED): Phase.IDLE,
}


class IllegalTransition(ValueError):
    pass


def transition(slot: Slot, event: Event, *, reservation: Reservation | None = None,
               not_before: float = 0.0) -> Slot:
    """The slot after ``event``. Raise :class:`IllegalTransition` for an edge the diagram lacks."""
    phase = _EDGES.get((slot.phase, event))
    if phase is None:
        raise IllegalTransition(f"{event.value} in {slot.phase.value}")
    if event is Event.CAPTURED:
        return Slot(phase, slot.baseline, reservation, 0.0)
    if event in (Event.PUBLISHED, Event.REFUSED_PERMANENTLY):
        return Slot(phase, slot.reservation.event_id, None, 0.0)
    if event is Event.REFUSED_RETRYABLY:
        return slot._replace(phase=phase, not_before=not_before)
    if event is Event.DEACTIVATED:
        return slot._replace(phase=phase, reservation=None, not_before=0.0)
    return slot._replace(phase=phase)


EVENT_OF_REFUSAL = {Refusal.PARK: Event.RECIPIENT_NOT_RUNNING, Refusal.PERMANENT: Event.REFUSED_PERMANENTLY,
                    Refusal.RETRY: Event.REFUSED_RETRYABLY}
