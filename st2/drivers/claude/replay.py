"""``st2 driver claude replay CAPTURE --identity I``: feed a captured status-line or hook JSONL
through the same producers and writers a live seat uses (for debugging a seat, and for tests).

Each line is one JSON object in one of three shapes, told apart by their keys:

- a raw hook payload (has ``hook_event_name``): a hook event;
- the lab tee's envelope ``{"hook": <Event>, "ts": …, "stdin": <payload or its text>}``: a hook
  event whose payload is ``stdin``;
- a status-line payload (has ``context_window``): a reading for the tee's recorder (the renderer
  is not run and no usage snapshot is written: replay records, it does not render).

A whole-file JSON object (a single ``NN-<Event>.json`` capture) is one line. Replay acts as a new
session: it makes the written relaunch claim first (so harness-context starts empty), then applies
every line under that session's token, exactly as hooks under a wrapper do. It prints one JSON
line per input line: ``{"line":n,"kind":"hook"|"statusline"|"skipped","event":…,"written":[…]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from st2.records import decoding
from st2.drivers.claude import HARNESS, recording
from st2.drivers.claude.seat import Seat, Session
from st2.records import harness_state


def entries(text: str) -> Iterator[tuple[int, str, str | None, Any]]:
    """Yield (line number, kind, event, payload) for each line of a capture."""
    stripped = text.strip()
    if stripped.startswith("{") and "\n{" not in stripped:
        lines = [stripped]
    else:
        lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = decoding.load_json(line)
        except ValueError:
            yield number, "skipped", None, None
            continue
        if not isinstance(value, dict):
            yield number, "skipped", None, None
        elif "hook_event_name" in value:
            yield number, "hook", value.get("hook_event_name"), value
        elif "hook" in value and "stdin" in value:
            payload = value["stdin"]
            if isinstance(payload, str):
                try:
                    payload = decoding.load_json(payload)
                except ValueError:
                    payload = None
            yield number, "hook", value.get("hook"), payload
        elif "context_window" in value:
            yield number, "statusline", None, value
        else:
            yield number, "skipped", None, None


def replay(capture: Path, seat: Seat, clock, runtime_id: str | None = None) -> list[dict[str, Any]]:
    """Replay ``capture`` into ``seat``; return the per-line report."""
    token = harness_state.session_token()
    seq = harness_state.claim(seat.directory, seat.agent, HARNESS, token, clock)
    session = Session(token, seq, runtime_id or seat.agent, True)
    report: list[dict[str, Any]] = []
    for number, kind, event, payload in entries(Path(capture).read_text(encoding="utf-8")):
        written: list[str] = []
        if kind == "hook" and isinstance(event, str):
            written = recording.apply_hook(seat, session, event, payload, clock)
        elif kind == "statusline":
            if recording.record_reading(seat, token, payload, clock):
                written = ["harness-context"]
        report.append({"line": number, "kind": kind, "event": event, "written": written})
    return report
