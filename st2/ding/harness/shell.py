"""The line composer of a plain terminal program (the demo ``shell`` seats, line-oriented TUIs).

Grammar, derived from how a terminal in canonical mode echoes input (and how the stand-in TUI
in ``tests/ding/`` draws):

- the live composer is the cursor's row: the text left of the cursor is the input, and the text
  right of it must be nothing or an idle placeholder drawn entirely dim (SGR 2) — a placeholder
  suggestion is not a human draft, but undimmed text right of the cursor is (a draft being
  edited in the middle);
- a row directly above that is a full ``width`` cells long means the input wrapped: unproven,
  the composer is not classified (fail closed);
- a submitted line is a row above the cursor whose text is exactly the notice; a queued one is
  ``queued: <notice>``.

Such a program has no turn state a screen can show, so an exact notice is Return-safe — and
because a line-oriented program may be an interactive shell, the notice it gets is rendered as
an inert shell comment (:func:`st2.ding.notice.shell_comment`): Return submits a comment, never
a subject.
"""

from __future__ import annotations

from st2.ding.notice import shell_comment
from st2.drivers.screen import (ComposerState, ReceiptState, Screen, cell_width, styled_characters)

QUEUED_PREFIX = "queued: "


class Shell:
    name = "shell"

    def notice(self, text: str) -> str:
        """The form a notice is typed in: an inert shell comment."""
        return shell_comment(text)

    def locate(self, screen: Screen) -> int | None:
        if screen.cursor_y is None or screen.cursor_x is None:
            return None
        if not 0 <= screen.cursor_y < len(screen.lines):
            return None
        return screen.cursor_y

    def _composer(self, screen: Screen) -> tuple[str, bool] | None:
        """(input left of the cursor, whether the rest of the row is empty or a dim placeholder);
        None when the composer cannot be read (wrapped or off-screen)."""
        row = self.locate(screen)
        if row is None:
            return None
        if row > 0 and screen.width and _cells(screen.lines[row - 1]) >= screen.width:
            return None
        left: list[str] = []
        right_dim = True
        right_text = False
        cells = 0
        for styled in styled_characters(screen.raw_lines[row]):
            if cells < screen.cursor_x:
                left.append(styled.character)
                cells += cell_width(styled.character)
                continue
            if not styled.character.isspace():
                right_text = True
                right_dim = right_dim and styled.dim
        return "".join(left).rstrip(" "), (not right_text) or right_dim

    def classify(self, screen: Screen, expected: str) -> ComposerState:
        composer = self._composer(screen)
        if composer is None:
            return ComposerState.AMBIGUOUS
        typed, rest_idle = composer
        if not rest_idle:
            return ComposerState.CHANGED
        if typed == "":
            return ComposerState.EMPTY_SAFE
        if typed == expected:
            return ComposerState.EXACT_SAFE
        return ComposerState.CHANGED

    def receipt(self, screen: Screen, expected: str) -> ReceiptState:
        composer = self._composer(screen)
        if composer is None:
            return ReceiptState.UNPROVEN
        typed, rest_idle = composer
        if typed == expected and rest_idle:
            return ReceiptState.RETAINED_SAFE
        if typed == "" and rest_idle:
            above = [line.strip() for line in screen.lines[:screen.cursor_y]]
            if expected in above or QUEUED_PREFIX + expected in above:
                return ReceiptState.ACCEPTED
        return ReceiptState.NOT_RETAINED


def _cells(text: str) -> int:
    return sum(cell_width(character) for character in text)
