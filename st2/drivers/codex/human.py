"""The human side of the Codex wrapper's PTY: what Codex is waiting for a person to answer, under
the keyboard grammar every native wrapper has (:mod:`st2.drivers.human_desk`; :mod:`.transcript`
documents it). ``/approve``, ``/decline`` and ``/answer`` resolve a pending request (``/answer``
the oldest of any kind)."""

from __future__ import annotations

from pathlib import Path

from st2.drivers import human_desk
from st2.drivers.codex import HARNESS, server_requests
from st2.drivers.codex.transcript import HELP


class HumanDesk(human_desk.HumanDesk):
    """Pending human requests and the keyboard, for one session (``session`` gives the
    connection, the transcript, the note, and the clock)."""

    harness = HARNESS

    def __init__(self, session, catalog: Path, seat, operator: str | None) -> None:
        super().__init__(session, catalog, seat, operator)
        self.pending: dict[str, tuple[object, str, object]] = {}   # request id text -> (id, method, params)

    def resolve(self, verb: str, which: str | None = None, text: str = "") -> bool:
        """Answer a pending human request (the oldest, or ``which``); False when none matches."""
        if not self.pending:
            return False
        key = which if which is not None else next(iter(self.pending))
        if key not in self.pending:
            return False
        accept = verb != "decline"
        request_id, method, params = self.pending.pop(key)
        self.session.connection.respond(request_id, server_requests.human_answer(
            method, params, accept, text if verb == "answer" else None))
        self.note(f"{'approved' if accept else 'declined'} [{key}]")
        return True

    def pending_asks(self) -> list[tuple[str, str, str, object]]:
        return [(key, server_requests.HUMAN_ASKS[method], server_requests.describe(method, params), [method, params])
                for key, (_, method, params) in self.pending.items()]

    def show_help(self) -> None:
        self.session.transcript.say(HELP)
