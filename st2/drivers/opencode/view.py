"""The human view in an opencode seat's PTY. By default the pane runs opencode's own TUI
(``opencode attach`` on the served session, :meth:`OpencodeSession.attach`); while it runs the
transcript is held (:attr:`View.held`: nothing is written over the TUI). Under ``view "transcript"``,
or once the attached TUI exits, the pane shows a readable transcript of the SSE stream and the
keyboard grammar:

- ``/approve [id]`` allows the oldest (or the named) pending permission once; ``/decline [id]``
  rejects a permission or a question; ``/answer <text>`` answers the oldest question — each through
  the server's reply endpoint (``POST /permission/{id}/reply``, ``POST /question/{id}/reply`` or
  ``/reject``);
- ``/help`` lists these; any other line is operator mail (:mod:`st2.drivers.human_desk`, the one
  grammar every native wrapper has).

Every byte shown comes from the harness or mail and is stripped of control characters first.
"""

from __future__ import annotations

import sys
from pathlib import Path

from st2.drivers import human_desk
from st2.drivers.human_desk import clean
from st2.drivers.opencode import HARNESS

HELP = ("st2: type a line to send it to this seat as the operator; /approve [id], /decline [id], "
        "/answer <text> resolve what opencode asks; /help shows this")


def describe(ask: str, properties: dict) -> str:
    """One line for a human: the permission and its patterns, or the questions."""
    if ask == "permission":
        return clean(f"{properties.get('permission')} {' '.join(map(str, properties.get('patterns') or []))}", 400)
    questions = properties.get("questions") or []
    return "; ".join(clean(q.get("question"), 300) for q in questions if isinstance(q, dict))


class View(human_desk.HumanDesk):
    """The transcript of the stream, and the keyboard under the grammar every native wrapper has
    (:mod:`st2.drivers.human_desk`)."""

    harness = HARNESS

    def __init__(self, session, catalog: Path, seat, operator: str | None, stream=None) -> None:
        super().__init__(session, catalog, seat, operator)
        self.stream = stream if stream is not None else sys.stdout
        self.pending: dict[str, tuple[str, dict]] = {}
        self.texts: dict[str, dict[str, str]] = {}     # message id -> part id -> text
        self.held = False   # True while opencode's attached TUI owns the pane

    def say(self, text: str) -> None:
        if self.held:
            return
        try:
            self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

    # --- the transcript ----------------------------------------------------------------------
    def seeded(self, pending: dict) -> None:
        for request_id, (ask, properties) in pending.items():
            if request_id not in self.pending:
                self._asked(request_id, ask, properties)
        self.pending = dict(pending)

    def _asked(self, request_id: str, ask: str, properties: dict) -> None:
        self.pending[request_id] = (ask, properties)
        if ask == "permission":
            self.say(f"?? opencode asks permission [{clean(request_id, 80)}]: {describe(ask, properties)} — "
                     f"/approve {clean(request_id, 80)} or /decline {clean(request_id, 80)}")
        else:
            self.say(f"?? opencode asks [{clean(request_id, 80)}]: {describe(ask, properties)} — "
                     "/answer <text> or /decline")

    def pending_asks(self) -> list[tuple[str, str, str, object]]:
        return [(key, ask, describe(ask, properties), properties) for key, (ask, properties) in self.pending.items()]

    def event(self, event: dict) -> None:
        kind, properties = event.get("type"), event.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        if kind == "message.part.updated":
            part = properties.get("part") if isinstance(properties.get("part"), dict) else {}
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                parts = self.texts.setdefault(str(part.get("messageID")), {})
                parts[str(part.get("id"))] = part["text"]
                if len(self.texts) > 64:
                    self.texts.pop(next(iter(self.texts)))
            elif part.get("type") == "tool" and isinstance(part.get("state"), dict) \
                    and part["state"].get("status") == "completed":
                self.say(f"tool: {clean(part.get('tool'), 80)} {clean(part['state'].get('title'), 200)}")
        elif kind == "message.updated":
            info = properties.get("info") if isinstance(properties.get("info"), dict) else {}
            completed = (info.get("time") or {}).get("completed") if isinstance(info.get("time"), dict) else None
            text = " ".join(self.texts.get(str(info.get("id")), {}).values())
            if info.get("role") == "assistant" and completed and text:
                self.say(f"opencode: {clean(text)}")
                self.texts.pop(str(info.get("id")), None)
            if isinstance(info.get("error"), dict):
                error = info["error"]
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                self.say(f"error: {clean(error.get('name'), 80)} {clean(data.get('message'), 300)}")
        elif kind in ("permission.asked", "question.asked") and isinstance(properties.get("id"), str):
            self._asked(properties["id"], "permission" if kind == "permission.asked" else "question", properties)
        elif kind in ("permission.replied", "question.replied", "question.rejected"):
            self.pending.pop(str(properties.get("requestID")), None)
        elif kind == "session.compacted":
            self.say("── context compacted")
        elif kind == "session.idle":
            self.say("── idle")

    # --- the keyboard ------------------------------------------------------------------------
    def _oldest(self, ask: str | None, which: str | None) -> str | None:
        if which is not None:
            return which if which in self.pending else None
        return next((key for key, (kind, _) in self.pending.items() if ask is None or kind == ask), None)

    def resolve(self, verb: str, which: str | None = None, text: str = "") -> bool:
        """Answer a pending ask through the server; False when none matches."""
        from st2.drivers.opencode.api import ApiError

        key = self._oldest("question" if verb == "answer" else None, which)
        if key is None:
            return False
        ask, properties = self.pending[key]
        client = self.session.client
        try:
            if ask == "permission":
                client.post(f"/permission/{key}/reply", {"reply": "once" if verb == "approve" else "reject"})
            elif verb == "decline":
                client.post(f"/question/{key}/reject", {})
            else:
                questions = properties.get("questions") or [{}]
                client.post(f"/question/{key}/reply", {"answers": [[text] for _ in questions]})
        except (ApiError, AttributeError) as error:
            self.say(f"st2: the answer was not taken: {error}")
            return True
        self.pending.pop(key, None)
        self.say(f"st2: {verb}d [{clean(key, 80)}]" if verb != "answer" else f"st2: answered [{clean(key, 80)}]")
        return True

    def show_help(self) -> None:
        self.say(HELP)
