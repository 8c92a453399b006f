"""``st2 driver opencode replay CAPTURE --identity I [--providers FILE]``: a captured SSE stream of
``GET /event`` (the lab's ``event.sse``) through the same producers and writers the live wrapper
uses — the context producer joined with the providers window, the observed state and its
harness-state projection — into the seat's records. The window comes from ``--providers`` (a
``GET /config/providers`` answer, or one provider object as the lab saves it), else from a
``config_providers*.json`` beside the capture. Every write that lands is printed as one JSON row
(``{"event": n, "record": "harness-context"|"harness-state", …}``); an event that is not JSON is
reported through ``problems``. Delivery is never replayed: no ledger is touched, nothing is sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterator

from st2.drivers.opencode import HARNESS
from st2.drivers.opencode.api import Malformed, events_of
from st2.drivers.opencode.context import ContextProducer
from st2.drivers.opencode.observed import Observed
from st2.drivers.seat import Seat
from st2.drivers.lifecycle import replay_writers


def providers_answer(path: Path) -> dict:
    """A ``GET /config/providers`` answer from ``path`` (one provider object is wrapped)."""
    body = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(body, dict) and "providers" not in body and "models" in body:
        body = {"providers": [body]}
    return body


def default_providers(capture: Path) -> Path | None:
    return next(iter(sorted(Path(capture).parent.glob("config_providers*.json"))), None)


def replay(capture: Path, seat: Seat, clock, runtime_id: str | None = None, providers: Path | None = None,
           problems: Callable[[str], None] = lambda line: None) -> Iterator[dict]:
    state_writer, context_writer = replay_writers(seat, HARNESS, clock, runtime_id)
    producer = ContextProducer()
    source = providers or default_providers(capture)
    if source is not None:
        producer.on_providers(providers_answer(source))
    observed = Observed()
    for number, event in enumerate(events_of(Path(capture).read_text(encoding="utf-8")), 1):
        if isinstance(event, Malformed):
            problems(f"event {number} is not a JSON object: {event.text}")
            continue
        reading, edge = producer.on_event(event)
        if (reading is not None or edge is not None) and context_writer.publish(reading, edge):
            yield {"event": number, "record": "harness-context", **context_writer.last_written.to_json()}
        if observed.on_event(event):
            projection = observed.project()
            if projection is not None and state_writer.observe(projection.state, projection.blocked_on, "unknown",
                                                               projection.ask):
                yield {"event": number, "record": "harness-state", "state": projection.state,
                       "blockedOn": projection.blocked_on, "ask": projection.ask}
