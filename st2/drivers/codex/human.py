"""The human side of the Codex wrapper's PTY: what Codex is waiting for a person to answer, and
the keyboard grammar (:mod:`.transcript` documents it). ``/approve``, ``/decline`` and
``/answer`` resolve a pending request; any other line is sent to the seat's own inbox as a bus
message from the seat's operator: the principal ``codex { operator "…" }`` names, else the
catalog's operator principal on this host (``principals/<host>/operator``,
:func:`st2.bus.principals.operator_principal`)."""

from __future__ import annotations

from pathlib import Path

from st2.drivers.codex import server_requests
from st2.drivers.codex.transcript import HELP


class HumanDesk:
    """Pending human requests and the keyboard, for one session (``session`` gives the
    connection, the transcript note, and the clock)."""

    def __init__(self, session, catalog: Path, seat, operator: str | None) -> None:
        self.session = session
        self.catalog = Path(catalog)
        self.seat = seat
        self.operator = operator
        self.pending: dict[str, tuple[object, str, object]] = {}   # request id text -> (id, method, params)
        self._keyboard = b""

    def note(self, message: str) -> None:
        self.session.note(message)

    def resolve(self, accept: bool, which: str | None = None, text: str | None = None) -> bool:
        """Answer a pending human request (the oldest, or ``which``); False when none matches."""
        if not self.pending:
            return False
        key = which if which is not None else next(iter(self.pending))
        if key not in self.pending:
            return False
        request_id, method, params = self.pending.pop(key)
        self.session.connection.respond(request_id, server_requests.human_answer(method, params, accept, text))
        self.note(f"{'approved' if accept else 'declined'} [{key}]")
        return True

    def on_keyboard(self, data: bytes) -> None:
        from st2.drivers.human_desk import keyboard_lines

        lines, self._keyboard = keyboard_lines(self._keyboard, data)
        for line in lines:
            self.on_line(line)

    def on_line(self, line: str) -> None:
        if not line:
            return
        words = line.split(maxsplit=1)
        if words[0] in ("/approve", "/decline"):
            if not self.resolve(words[0] == "/approve", words[1] if len(words) > 1 else None):
                self.note("nothing is waiting for that answer")
            return
        if words[0] == "/answer":
            if not self.resolve(True, None, words[1] if len(words) > 1 else ""):
                self.note("no question is waiting")
            return
        if words[0] == "/help":
            self.session.transcript.say(HELP)
            return
        self.publish_operator_line(line)

    def publish_operator_line(self, line: str) -> None:
        from st2.drivers.operator_line import publish_operator_line

        publish_operator_line(self.catalog, self.seat, self.operator, line, self.session.clock, self.note, "codex")
