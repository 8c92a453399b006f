"""The fleet's Prometheus metrics, for a web server's ``/metrics`` and for node_exporter's
textfile collector.

:class:`FleetCollector` reads a :class:`st2.top.live.LiveFleet` — its ``fleet``
(:class:`st2.top.model.Fleet`), ``usage`` (:class:`st2.top.usage_view.UsageView`) and ``clock`` —
and nothing else: a scrape never reads the catalog again, it reports what the live fleet last
read. Every family is a gauge; :data:`METRICS` pins each name, help text and label set, in
exposition order.

Labels are bounded: a per-seat series is labelled by the seat's runtime id only
(``alpha.builder``), never by its name, description or path; the driver-diagnostic family carries
exactly the telemetry axes of :data:`st2.records.driver_diagnostic.TELEMETRY_AXES`. Label values
are passed through as the records give them; prometheus_client escapes them on the wire.

Delivery counts are a native seat's delivery ledger entries by phase (``attempted``,
``transportAccepted``, ``persisted``, ``consumed``; ``quarantined`` for a ledger its pump refuses),
as the live fleet re-reads them when the ledger changes: the deliveries in flight or awaiting the
recipient's settling (a ledger forgets an entry once its message leaves the unread set). A DING
seat keeps no ledger and has no such series.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterator

from prometheus_client import CollectorRegistry, generate_latest, write_to_textfile
from prometheus_client.core import GaugeMetricFamily

from st2.records.driver_diagnostic import ABSENT, FAILURE, PUBLISHED
from st2.top.model import SeatView, task_trouble

RUNTIME_ID = ("runtime_id",)
DIAGNOSTIC_AXES = ("driver", "stage", "reason", "source", "support", "outcome")

# name -> (help, labels), in exposition order. The names and labels are the wire contract.
METRICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "st2_seats": ("Seats by harness and observed state word (- without a harness-state record).",
                  ("harness", "state")),
    "st2_seats_blocked_on_human": ("Seats whose harness is blocked on a human.", ()),
    "st2_seat_context_used_percent": ("The seat's context window fill, percent, as its harness last reported it.",
                                      RUNTIME_ID),
    "st2_seat_compactions": ("Compactions of the seat's current harness session.", RUNTIME_ID),
    "st2_seat_inbox_unread": ("Unread messages in the seat's inbox.", RUNTIME_ID),
    "st2_seat_oldest_unread_age_seconds": ("Age of the seat's oldest unread message, seconds.", RUNTIME_ID),
    "st2_seat_deliveries": ("A native seat's delivery ledger entries by phase (in flight or awaiting settling).",
                            ("runtime_id", "phase")),
    "st2_tasks": ("This host's tasks by trouble word (ok: as it should be).", ("trouble",)),
    "st2_usage_used_percent": ("The account's usage window fill, percent.", ("window",)),
    "st2_usage_verdict": ("1 for the usage verdict in force.", ("verdict",)),
    "st2_driver_diagnostic_seats": ("Seats by their current driver diagnostic (outcome published: a driver's "
                                    "failure; empty: an untrusted record).", DIAGNOSTIC_AXES),
}

UNKNOWN_HARNESS = "unknown"
TASK_OK = "ok"


def seat_harness(seat: SeatView) -> str:
    """The declared harness, else the observed state's, else :data:`UNKNOWN_HARNESS`."""
    row = seat.row
    observed = row.observed_state.harness if row.observed_state is not None else None
    return row.harness or observed or UNKNOWN_HARNESS


def diagnostic_labels(seat: SeatView) -> tuple[str, ...] | None:
    """The seat's current driver diagnostic as :data:`DIAGNOSTIC_AXES` values (an absent field
    reads ``""``; ``outcome`` is ``published`` for a driver's failure, ``""`` for a record that
    cannot be trusted), or None when the seat has no record."""
    diagnostic = seat.row.driver_diagnostic
    if diagnostic is None or diagnostic.status == ABSENT:
        return None
    outcome = PUBLISHED if diagnostic.status == FAILURE else ""
    return (diagnostic.driver or "", diagnostic.stage or "", diagnostic.reason or "", diagnostic.source or "",
            diagnostic.support or "", outcome)


def _family(name: str) -> GaugeMetricFamily:
    help_text, labels = METRICS[name]
    return GaugeMetricFamily(name, help_text, labels=labels)


def _add_labelled(family: GaugeMetricFamily, labels: dict[str, str], value: float) -> None:
    """A sample whose label set is wider than the family's own (``add_metric`` takes only those)."""
    from prometheus_client.samples import Sample

    family.samples.append(Sample(family.name, labels, float(value)))


class FleetCollector:
    """A custom collector over ``live`` (an object with ``fleet``, ``usage`` and ``clock``, as
    :class:`st2.top.live.LiveFleet` has). :meth:`collect` yields every family of :data:`METRICS`
    in table order, each one's samples in label order, computed from the objects in memory at
    ``live.clock.wall_ms()``."""

    def __init__(self, live) -> None:
        self.live = live

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """The families without samples: registering never computes a scrape."""
        return (_family(name) for name in METRICS)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        now_ms = self.live.clock.wall_ms()
        seats = sorted(self.live.fleet.seats.values(), key=lambda seat: seat.identity)
        families = {name: _family(name) for name in METRICS}

        for labels, count in sorted(Counter((seat_harness(seat), seat.state_word) for seat in seats).items()):
            families["st2_seats"].add_metric(labels, count)
        families["st2_seats_blocked_on_human"].add_metric([], sum(seat.blocked_on_human for seat in seats))
        for seat in seats:
            runtime_id = [seat.identity]
            context = seat.row.context
            if context is not None and context.used_percent is not None:
                families["st2_seat_context_used_percent"].add_metric(runtime_id, context.used_percent)
            if context is not None and context.compactions is not None:
                families["st2_seat_compactions"].add_metric(runtime_id, context.compactions)
            families["st2_seat_inbox_unread"].add_metric(runtime_id, seat.row.inbox)
            if seat.oldest_unread_ms is not None:
                age_ms = max(0, now_ms - seat.oldest_unread_ms)
                families["st2_seat_oldest_unread_age_seconds"].add_metric(runtime_id, age_ms / 1000)
            for phase, count in sorted((seat.deliveries or {}).items()):
                families["st2_seat_deliveries"].add_metric([seat.identity, phase], count)

        troubles = Counter(task_trouble(task) or TASK_OK for seat in seats for task in seat.tasks)
        for trouble, count in sorted(troubles.items()):
            families["st2_tasks"].add_metric([trouble], count)

        usage = self.live.usage
        for window, percent in (("five_hour", usage.five_hour_pct), ("seven_day", usage.seven_day_pct)):
            if percent is not None:
                families["st2_usage_used_percent"].add_metric([window], percent)
        if usage.verdict_word:
            families["st2_usage_verdict"].add_metric([usage.verdict_word], 1)
        for account in getattr(usage, "accounts", ()):
            # A declared account's series are the host's with an ``account`` label added (the
            # family's other samples, the host's reading, keep their label set).
            for window, percent in (("five_hour", account.five_hour_pct), ("seven_day", account.seven_day_pct)):
                if percent is not None:
                    _add_labelled(families["st2_usage_used_percent"], {"account": account.name, "window": window},
                                  percent)
            _add_labelled(families["st2_usage_verdict"], {"account": account.name, "verdict": account.verdict_word}, 1)

        diagnostics = Counter(labels for seat in seats if (labels := diagnostic_labels(seat)) is not None)
        for labels, count in sorted(diagnostics.items()):
            families["st2_driver_diagnostic_seats"].add_metric(labels, count)
        yield from families.values()


def registry_for(live) -> CollectorRegistry:
    """A registry holding only ``live``'s :class:`FleetCollector` (no process or platform
    collectors)."""
    registry = CollectorRegistry()
    registry.register(FleetCollector(live))
    return registry


def render(live) -> bytes:
    """The text exposition of ``live``'s metrics (what ``/metrics`` serves)."""
    return generate_latest(registry_for(live))


def write_textfile(live, path: str) -> None:
    """Publish ``live``'s metrics at ``path`` for node_exporter's textfile collector (which reads
    only ``*.prom``): written to ``<path>.<pid>.<thread>`` beside it and renamed into place, so a
    reader sees the old file or the whole new one. Raise OSError when the machine refuses; the
    temp file is removed then."""
    write_to_textfile(path, registry_for(live))
