"""``st2 driver codex replay CAPTURE --identity I``: a captured JSONL of app-server frames (the
lab's ``app-server.harness.jsonl``, one frame per line, or the wrapper's own
``$ST2_CODEX_FRAME_LOG`` with ``{"dir": "in", "msg": …}`` rows) through the same producers and
writers the live wrapper uses — the context producer and the harness-context writer, the control
state and its harness-state projection — into the seat's records. Every write that lands is
printed as one JSON row (``{"frame": n, "record": "harness-context"|"harness-state", …}``).
Delivery is never replayed: no ledger is touched and nothing is sent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator

from st2.drivers.codex import HARNESS
from st2.drivers.codex import control as control_module
from st2.drivers.codex.context import ContextProducer
from st2.drivers.codex.control import ControlState, Event
from st2.drivers.seat import Seat
from st2.drivers.lifecycle import replay_writers


def frames(capture: Path) -> Iterator[dict]:
    """The inbound frames of ``capture`` (rows that are not JSON objects are skipped)."""
    for line in Path(capture).read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "dir" in row and "msg" in row:
            if row["dir"] == "in" and isinstance(row["msg"], dict):
                yield row["msg"]
        elif isinstance(row, dict):
            yield row


_CONTROL = {"turn/started": Event.TURN_STARTED, "turn/completed": Event.TURN_COMPLETED}


def replay(capture: Path, seat: Seat, clock, runtime_id: str | None = None) -> Iterator[dict]:
    state_writer, context_writer = replay_writers(seat, HARNESS, clock, runtime_id)
    producer = ContextProducer()
    control = ControlState()
    for number, frame in enumerate(frames(capture), 1):
        method, params = frame.get("method"), frame.get("params") if isinstance(frame.get("params"), dict) else {}
        result = frame.get("result") if isinstance(frame.get("result"), dict) else {}
        thread = result.get("thread")
        if isinstance(thread, dict) and isinstance(thread.get("id"), str) and control.thread_id is None:
            control = control_module.transition(control, Event.BOUND, thread["id"])
            control = control_module.transition(control, Event.STATUS, thread.get("status"))
        if method == "thread/status/changed":
            control = control_module.transition(control, Event.STATUS, params.get("status"))
        elif method in _CONTROL:
            turn = params.get("turn") if isinstance(params.get("turn"), dict) else {}
            control = control_module.transition(control, _CONTROL[method], turn.get("id"))
        elif method == "serverRequest/resolved":
            control = control_module.transition(control, Event.REQUEST_RESOLVED, params.get("requestId"))
        elif method is not None and "id" in frame:
            from st2.drivers.codex.server_requests import HUMAN_ASKS

            if method in HUMAN_ASKS:
                control = control_module.transition(control, Event.REQUEST_OPENED, frame["id"], HUMAN_ASKS[method])
        reading, edge = producer.on_frame(frame)
        if (reading is not None or edge is not None) and context_writer.publish(reading, edge):
            yield {"frame": number, "record": "harness-context", **context_writer.last_written.to_json()}
        projection = control_module.project(control)
        if projection is not None and projection is not control_module.UNKNOWN:
            if state_writer.observe(projection.state, projection.blocked_on, "unknown", projection.ask,
                                    projection.reason):
                yield {"frame": number, "record": "harness-state", "state": projection.state,
                       "blockedOn": projection.blocked_on, "ask": projection.ask}
