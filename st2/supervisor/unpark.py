"""Recovering one parked task (``st2 unpark``)."""

from __future__ import annotations

from st2.catalog.location import CatalogLocation
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.supervisor import park
from st2.runtime.scope import RuntimeScope


def unpark(location: CatalogLocation, runtime_id: str, clock: Clock = SYSTEM_CLOCK) -> tuple[int, str]:
    """Return (exit status, message). A believable park gets an unpark request the running
    supervisor consumes (clearing exactly that task's park and budget); a marker whose supervisor
    is gone is removed (it already read as not parked); anything else is refused."""
    scope = RuntimeScope(location.root, location.host)
    reading = park.read(scope, runtime_id)
    if reading.belief is park.Belief.PARKED and not reading.marker.recoverable:
        return 1, (f"st2 unpark: {runtime_id} can never start as declared ({reading.marker.reason}); "
                   "unparking would relaunch into the same failure: fix the cause and st2 up launches it")
    if reading.belief is park.Belief.PARKED:
        park.request_unpark(scope, runtime_id, clock.wall_ms())
        return 0, f"unpark requested for {runtime_id}; supervisor pid {reading.marker.supervisor.pid} relaunches it"
    if reading.belief is park.Belief.INDETERMINATE:
        return 1, f"st2 unpark: {reading.error}; not touching it"
    if reading.marker is not None:
        park.clear(scope, runtime_id)
        return 0, f"{runtime_id} was parked by a supervisor that is gone; cleared the stale marker"
    return 1, f"st2 unpark: {runtime_id} is not parked on {location.host} in {location.root}"
