"""The human side of a native wrapper's PTY (Codex, opencode): the keyboard and its one grammar.

- ``/approve [id]`` allows the oldest (or the named) pending ask; ``/decline [id]`` refuses it;
  ``/answer <text>`` answers the oldest question — each through the driver's :meth:`HumanDesk.resolve`;
- ``/help`` shows the driver's help line;
- any other line is a bus message into the seat's own inbox from its operator: the principal the
  driver block's ``operator`` names, else the catalog's operator principal on this host
  (:mod:`st2.drivers.operator_line`), so it travels the ledger like mail.
"""

from __future__ import annotations

import hashlib
import json
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


def ask_digest(key: str, kind: str, raw: Any) -> str:
    """An ask's identity within one incarnation: SHA-256 over its key, kind and content."""
    text = json.dumps([key, kind, raw], sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


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

    def pending_asks(self) -> list[tuple[str, str, str, Any]]:
        """Every pending ask, oldest first: ``(key, kind, text, raw)`` — the key :meth:`resolve`
        takes, ``permission`` or ``question``, one line for a human, and the ask as the harness
        sent it (what its digest covers)."""
        raise NotImplementedError

    def asks(self) -> list[dict]:
        """The pending asks as the answer channel shows them (:mod:`st2.drivers.answer_channel`)."""
        return [{"digest": ask_digest(key, kind, raw), "kind": kind, "text": clean(text, 2000)}
                for key, kind, text, raw in self.pending_asks()]

    def answer(self, digest: str, verb: str, text: str) -> dict:
        """Resolve the pending ask whose digest is ``digest``; refused when none has it."""
        for key, kind, _, raw in self.pending_asks():
            if ask_digest(key, kind, raw) == digest:
                if verb == "answer" and kind != "question":
                    return {"ok": False, "outcome": "refused: that ask is not a question"}
                if not self.resolve(verb, key, text) or key in (pending[0] for pending in self.pending_asks()):
                    return {"ok": False, "outcome": "not taken: the harness did not accept the answer"}
                self.note(f"{verb} from the operator's web page [{clean(key, 80)}]")
                return {"ok": True, "outcome": {"approve": "approved", "decline": "declined"}.get(verb, "answered")}
        return {"ok": False, "outcome": "refused: that ask is no longer pending (answered, or replaced by another)"}

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
