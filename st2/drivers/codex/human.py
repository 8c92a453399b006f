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
        self._keyboard += data
        while b"\n" in self._keyboard:
            raw, self._keyboard = self._keyboard.split(b"\n", 1)
            self.on_line(raw.decode("utf-8", "replace").strip())
        if len(self._keyboard) > 64 * 1024:
            self._keyboard = b""

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
        from st2.bus import BusError
        from st2.bus.addressing import resolve_seat
        from st2.bus.principals import OPERATOR, operator_principal, resolve_principal
        from st2.bus.send import send

        host = self.seat.agent.split(".", 1)[0]
        try:
            principal = (resolve_principal(self.catalog, self.operator, host) if self.operator
                         else operator_principal(self.catalog, host))
            if principal is None:
                self.note(f"no operator principal is declared (principals/{host}/{OPERATOR}/principal.kdl, or "
                          "codex { operator \"…\" }); line not sent")
                return
            recipient = resolve_seat(self.catalog, self.seat.agent)
            receipt = send(self.catalog, recipient, sender=principal.bus_id, body=line, subject=line[:80],
                           clock=self.session.clock)
        except BusError as error:
            self.note(f"line not sent: {error}")
            return
        self.note(f"sent as {principal.bus_id}: {receipt.filename}")
