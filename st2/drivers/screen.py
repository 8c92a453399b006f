"""One observed terminal screen and what a harness adapter may conclude from it.

A :class:`Screen` is one ``tmux capture-pane -p -e`` of the visible pane plus the cursor
position, in two forms describing the same rows: ``raw_lines`` keep the SGR styling (a dim
placeholder and the Codex prompt markers are styling), ``lines`` are ANSI-stripped. Rows are the
unit every adapter reports positions in, so adapters matching raw text and adapters matching
stripped text compare correctly.

Two verdicts exist (docs/delivery.md §Screen-verified notice):

- :class:`ComposerState`, one inspection against one exact expected notice, decides whether a
  paste or a Return may be sent. ``AMBIGUOUS`` is the default for anything not positively
  understood.
- :class:`ReceiptState`, after transport, decides delivery. Only ``ACCEPTED`` is delivery.

Dispatch is positional: every adapter is asked to locate its live composer and the lowest one
on the screen is classified (scrollback is above the live composer by construction).
"""

from __future__ import annotations

import enum
import re
import unicodedata
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence


class ComposerState(enum.Enum):
    EMPTY_SAFE = "empty-safe"          # positively idle, composer empty or an idle placeholder
    EXACT_SAFE = "exact-safe"          # the exact notice is the whole composer; Return is safe
    EXACT_BLOCKED = "exact-blocked"    # the exact notice is there, but a turn/modal blocks Return
    CHANGED = "changed"                # a composer holding other text (a human draft)
    AMBIGUOUS = "ambiguous"            # nothing proven


class ReceiptState(enum.Enum):
    ACCEPTED = "accepted"              # notice in a submitted/queued pattern, composer empty
    RETAINED_SAFE = "retained-safe"
    RETAINED_BLOCKED = "retained-blocked"
    NOT_RETAINED = "not-retained"      # a parsed composer proves the notice is not there
    UNPROVEN = "unproven"


_SGR_OR_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]PX^_].*?(?:\x07|\x1b\\)|\x1b.")


def strip_ansi(text: str) -> str:
    return _SGR_OR_ESCAPE.sub("", text)


def cell_width(character: str) -> int:
    """Terminal cells one character occupies (combining marks 0, East Asian wide/full 2)."""
    if unicodedata.combining(character):
        return 0
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


@dataclass(frozen=True)
class StyledCharacter:
    character: str
    dim: bool


def styled_characters(raw_line: str) -> list[StyledCharacter]:
    """The printable characters of one raw row with whether SGR dim (2) is in effect."""
    result: list[StyledCharacter] = []
    dim = False
    index = 0
    while index < len(raw_line):
        match = _SGR_OR_ESCAPE.match(raw_line, index) if raw_line[index] == "\x1b" else None
        if match is not None:
            sequence = match.group(0)
            if sequence.startswith("\x1b[") and sequence.endswith("m"):
                parameters = sequence[2:-1].split(";") if sequence[2:-1] else ["0"]
                for parameter in parameters:
                    if parameter in ("0", ""):
                        dim = False
                    elif parameter == "2":
                        dim = True
                    elif parameter == "22":
                        dim = False
            index = match.end()
            continue
        result.append(StyledCharacter(raw_line[index], dim))
        index += 1
    return result


@dataclass(frozen=True)
class Screen:
    """One capture: rows (raw and stripped), the cursor cell, and the pane width."""

    raw_lines: tuple[str, ...]
    lines: tuple[str, ...]
    cursor_x: int | None = None
    cursor_y: int | None = None
    width: int | None = None

    @classmethod
    def parse(cls, raw: str, cursor_x: int | None = None, cursor_y: int | None = None,
              width: int | None = None) -> "Screen":
        raw_lines = tuple(raw.split("\n"))
        if raw_lines and raw_lines[-1] == "":
            raw_lines = raw_lines[:-1]
        return cls(raw_lines, tuple(strip_ansi(line) for line in raw_lines), cursor_x, cursor_y, width)

    @property
    def raw(self) -> str:
        return "\n".join(self.raw_lines)

    @property
    def plain(self) -> str:
        return "\n".join(self.lines)


class Harness(Protocol):
    """One maintained harness's screen grammar. ``locate`` returns the row of its live composer
    (None when this screen has none of its composers); ``classify`` and ``receipt`` are only
    asked about a screen ``locate`` accepted."""

    name: str

    def locate(self, screen: Screen) -> int | None: ...

    def classify(self, screen: Screen, expected: str) -> ComposerState: ...

    def receipt(self, screen: Screen, expected: str) -> ReceiptState: ...

    # Optional: ``notice(text) -> str``, the form a notice is typed in on this surface (the line
    # grammar renders it as an inert shell comment); absent, the notice is typed as it is.


ComposerFacts = tuple  # (row, exact, empty, idle) about the live composer, or None


def composer_verdict(facts: ComposerFacts | None) -> ComposerState:
    """The composer verdict shared by the TUI grammars, from ``(row, exact, empty, idle)``:
    the notice alone in an idle composer is safe to submit; an empty idle composer is safe to
    paste into; anything busy or unlocated is ambiguous; other text is a human's change."""
    if facts is None:
        return ComposerState.AMBIGUOUS
    _, exact, empty, idle = facts
    if exact:
        return ComposerState.EXACT_SAFE if idle else ComposerState.EXACT_BLOCKED
    if empty:
        return ComposerState.EMPTY_SAFE if idle else ComposerState.AMBIGUOUS
    return ComposerState.CHANGED


def receipt_verdict(facts: ComposerFacts | None, accepted: Callable[[int], bool]) -> ReceiptState:
    """The receipt verdict shared by the TUI grammars: still in the composer is retained; an
    empty composer with ``accepted(row)`` (the harness's own submitted/queued pattern above the
    composer row) is accepted; an empty composer without it is not retained."""
    if facts is None:
        return ReceiptState.UNPROVEN
    row, exact, empty, idle = facts
    if exact:
        return ReceiptState.RETAINED_SAFE if idle else ReceiptState.RETAINED_BLOCKED
    if empty and accepted(row):
        return ReceiptState.ACCEPTED
    return ReceiptState.NOT_RETAINED


def live_harness(screen: Screen, adapters: Sequence[Harness]) -> Harness | None:
    """The adapter whose composer is lowest on the screen (a tie goes to the later adapter)."""
    best: tuple[int, Harness] | None = None
    for adapter in adapters:
        row = adapter.locate(screen)
        if row is not None and (best is None or row >= best[0]):
            best = (row, adapter)
    return None if best is None else best[1]


def classify(screen: Screen, expected: str, adapters: Sequence[Harness]) -> ComposerState:
    adapter = live_harness(screen, adapters)
    return ComposerState.AMBIGUOUS if adapter is None else adapter.classify(screen, expected)


def receipt(screen: Screen, expected: str, adapters: Sequence[Harness]) -> ReceiptState:
    adapter = live_harness(screen, adapters)
    return ReceiptState.UNPROVEN if adapter is None else adapter.receipt(screen, expected)


def compact(text: str) -> str:
    """``text`` without any whitespace: renderer soft wraps then cannot break a comparison."""
    return "".join(character for character in text if not character.isspace())


def soft_wrap_candidates(rows: Sequence[str], limit: int = 64) -> list[str] | None:
    """Every logical string the wrapped ``rows`` can stand for: at each row boundary the renderer
    either dropped one space or split a word, so each boundary gives two joins. None (unproven)
    when there are too many boundaries to enumerate."""
    if len(rows) > 6:
        return None
    candidates = [rows[0]] if rows else [""]
    for row in rows[1:]:
        candidates = [joined for candidate in candidates
                      for joined in (candidate + " " + row, candidate + row)]
        if len(candidates) > limit:
            return None
    return candidates
