"""The human side of a native wrapper's PTY (Codex, opencode): the keyboard and its one grammar.

- ``/approve [id]`` allows the oldest (or the named) pending ask; ``/decline [id]`` refuses it;
  ``/answer <text>`` answers the oldest question — each through the driver's :meth:`HumanDesk.resolve`;
- ``/help`` shows the driver's help line;
- any other line is a bus message into the seat's own inbox from its operator: the principal the
  driver block's ``operator`` names, else the catalog's operator principal on this host
  (:mod:`st2.drivers.operator_line`), so it travels the ledger like mail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def clean(text: Any, limit: int = 2000) -> str:
    """Printable text only (a tab and newline survive as a space), bounded."""
    value = str(text) if text is not None else ""
    value = "".join(ch if ch.isprintable() else " " for ch in value.replace("\t", " ").replace("\n", " "))
    return value if len(value) <= limit else value[:limit] + "…"


def keyboard_lines(pending: bytes, data: bytes, limit: int = 64 * 1024) -> tuple[list[str], bytes]:
    """The complete lines typed so far (decoded, stripped) and what is left pending; a pending
    partial line beyond ``limit`` bytes is dropped."""
    pending += data
    lines = []
    while b"\n" in pending:
        raw, pending = pending.split(b"\n", 1)
        lines.append(raw.decode("utf-8", "replace").strip())
    return lines, (b"" if len(pending) > limit else pending)


class HumanDesk:
    """The keyboard of one session (``session`` gives ``note`` — a line on the PTY — and the
    clock). A driver says how a pending ask is answered (:meth:`resolve`) and shows its help
    (:meth:`show_help`); :attr:`harness` names it in the operator line's record."""

    harness = ""

    def __init__(self, session, catalog: Path, seat, operator: str | None) -> None:
        self.session = session
        self.catalog = Path(catalog)
        self.seat = seat
        self.operator = operator
        self._keyboard = b""

    def note(self, message: str) -> None:
        self.session.note(message)

    def resolve(self, verb: str, which: str | None = None, text: str = "") -> bool:
        """Answer a pending ask: ``verb`` is ``approve``, ``decline`` or ``answer`` (with
        ``text``); the oldest suitable ask, or ``which``. False when none matches."""
        raise NotImplementedError

    def show_help(self) -> None:
        raise NotImplementedError

    def on_keyboard(self, data: bytes) -> None:
        lines, self._keyboard = keyboard_lines(self._keyboard, data)
        for line in lines:
            self.on_line(line)

    def on_line(self, line: str) -> None:
        if not line:
            return
        words = line.split(maxsplit=1)
        if words[0] in ("/approve", "/decline"):
            if not self.resolve(words[0][1:], words[1] if len(words) > 1 else None):
                self.note("nothing is waiting for that answer")
            return
        if words[0] == "/answer":
            if not self.resolve("answer", None, words[1] if len(words) > 1 else ""):
                self.note("no question is waiting")
            return
        if words[0] == "/help":
            self.show_help()
            return
        from st2.drivers.operator_line import publish_operator_line

        publish_operator_line(self.catalog, self.seat, self.operator, line, self.session.clock, self.note,
                              self.harness)
