"""The human view in the seat's PTY: a readable live transcript of the thread (turns, agent text,
tool calls, approvals asked) and the keyboard grammar a human uses there.

Keyboard (one line at a time, the terminal's own line editing):

- ``/approve`` or ``/decline`` resolves the oldest pending approval or question (``/approve <id>``
  names one; a question's answer is ``/answer <text>``);
- ``/help`` lists these; any other line is published as a bus message from the seat's declared
  operator principal into the seat's own inbox, so it travels the same ledger as mail.

Every byte shown comes from the harness or mail and is stripped of control characters first, so
nothing printed can drive the terminal.
"""

from __future__ import annotations

import sys
from typing import Any

from st2.drivers.human_desk import clean

HELP = ("st2: type a line to send it to this seat as the operator; /approve [id], /decline [id], "
        "/answer <text> resolve what Codex asks; /help shows this")


def _object(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def line_for(frame: dict) -> str | None:
    """One transcript line for a notification, or None for frames not worth a line. Any shape
    is tolerated: a field of the wrong type reads as absent."""
    method, params = frame.get("method"), _object(frame.get("params"))
    if method == "turn/started":
        return "── turn started"
    if method == "turn/completed":
        turn = _object(params.get("turn"))
        error = _object(turn.get("error"))
        suffix = f" with error: {clean(error.get('message'), 300)}" if error else ""
        return f"── turn {clean(turn.get('status', '?'), 40)}{suffix}"
    if method == "item/completed":
        item = _object(params.get("item"))
        kind = item.get("type")
        if kind == "agentMessage":
            return f"codex: {clean(item.get('text'))}"
        if kind == "userMessage":
            from st2.drivers.codex.pump import user_message_text

            return f"you/mail: {clean(user_message_text(item), 400)}"
        if kind == "commandExecution":
            return f"ran: {clean(item.get('command'), 300)} → exit {clean(item.get('exitCode'), 20)}"
        if kind == "fileChange":
            return "changed files"
        if kind == "contextCompaction":
            return "── context compacted"
        if kind in ("mcpToolCall", "dynamicToolCall"):
            return f"tool: {clean(item.get('tool') or item.get('name'), 100)}"
    if method == "error":
        error = params.get("error")
        return f"error: {clean(error.get('message') if isinstance(error, dict) else error, 300)}"
    return None


class Transcript:
    def __init__(self, stream=None) -> None:
        self.stream = stream if stream is not None else sys.stdout

    def say(self, text: str) -> None:
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass  # the terminal is gone; the session goes on

    def frame(self, frame: dict) -> None:
        line = line_for(frame)
        if line is not None:
            self.say(line)

    def asked(self, request_id, method: str, description: str) -> None:
        self.say(f"?? codex asks [{request_id}]: {clean(description, 400)} — /approve {request_id} or "
                 f"/decline {request_id}")
