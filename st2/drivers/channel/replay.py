"""``st2 driver pi replay CAPTURE --identity I`` (and ``st2 driver omp replay``): feed a captured
channel (``captures/<harness>/<version>/channel/frames.jsonl``: the extension's wire, one frame a
line) through the same consumer and writers a live wrapper uses — for debugging a seat, and for
the fixtures.

Replay acts as a new session: it makes the written relaunch claim first (so harness-context starts
empty), then applies every line under that session's token. It prints one JSON line per input
line: ``{"line":n,"kind":"context"|"state"|"malformed"|"blank","event":…,"written":[…]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from st2.drivers.channel.frames import ContextFrame, Malformed, decode
from st2.records import harness_context, harness_state


def replay(capture: Path, seat, harness: str, clock, runtime_id: str | None = None,
           diagnose=None) -> list[dict[str, Any]]:
    """Replay ``capture`` into ``seat`` as ``harness``; return the per-line report."""
    from st2.drivers.channel.frames import Consumer

    token = harness_state.session_token()
    seq = harness_state.claim(seat.directory, seat.agent, harness, token, clock)
    state = harness_state.Writer(seat.directory, seat.agent, harness, clock, pty_session=runtime_id or seat.agent,
                                 incarnation=token, claimed_seq=seq)
    context = harness_context.Writer(seat.directory, seat.agent, harness, token, clock)
    diagnostics: list[str] = []
    consumer = Consumer(context, state, diagnose or diagnostics.append)
    report: list[dict[str, Any]] = []
    for number, line in enumerate(Path(capture).read_bytes().split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            frame = decode(line)
        except Malformed:
            kind, event = "malformed", None
        else:
            kind, event = ("context" if isinstance(frame, ContextFrame) else "state"), frame.event
        written = consumer.line(line)
        report.append({"line": number, "kind": kind, "event": event, "written": written})
    return report
