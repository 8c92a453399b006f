"""The pi TUI composer (pi 0.73.1, ``captures/pi/0.73.1/screens/``): the rows between the last
two full-width rules, with no prompt glyph, above a footer of the working directory and a
context-usage row.

- Rules are lines whose trimmed content is at least 40 ``─``. pi is located only when the footer
  has its own shape — a directory row (``/…`` or ``~…``) followed by a row carrying
  ``<n>%/<m>k`` — so another harness drawn between rules (Claude Code) is never taken for pi.
  After ``/compact`` the context usage is unknown until pi's next reply and the row carries
  ``?/<m>k`` instead (``compacted-empty``, ``compacted-pasted``; pi's ``footer.js`` prints ``?``
  when the percent is null): exactly a lone ``?`` stands in for ``<n>%``, nothing looser.
- Empty is a composer whose rows are all blank (the cursor is a reverse-video space).
- A running turn is a spinner row ``<glyph> Working...`` above the composer; it blocks Return
  and paste. pi draws no idle marker, so idle is the absence of that row.
- A submitted prompt is a transcript row holding exactly the text (wrapped rows admitted); a
  prompt sent during a turn is listed as ``Steering: <text>`` (or ``Follow-up: <text>``).
"""

from __future__ import annotations

import re

from st2.drivers.screen import (ComposerState, ReceiptState, Screen, compact, composer_verdict, receipt_verdict,
                             soft_wrap_candidates)

# ``<n>%/<m>k``, or pi's post-compaction ``?/<m>k``: the ``?`` alone, as its own word.
_USAGE_ROW = re.compile(r"(?:\d+(?:\.\d+)?%|(?<!\S)\?)/\d+(?:\.\d+)?[kM]")
_WORKING_ROW = re.compile(r"^\s*\S\s+Working\.\.\.")
_QUEUED_PREFIXES = ("Steering: ", "Follow-up: ")


class Pi:
    name = "pi"

    def _locate(self, screen: Screen) -> tuple[int, int, list[str]] | None:
        lines = screen.lines
        rules = [index for index, line in enumerate(lines)
                 if len(line.strip()) >= 40 and set(line.strip()) == {"─"}]
        if len(rules) < 2:
            return None
        top, bottom = rules[-2], rules[-1]
        footer = [line.strip() for line in lines[bottom + 1:] if line.strip()]
        if len(footer) < 2 or not footer[0].startswith(("/", "~")) or not _USAGE_ROW.search(footer[1]):
            return None
        rows = [row.strip() for row in lines[top + 1:bottom]]
        while len(rows) > 1 and rows[-1] == "":
            rows.pop()
        return top, bottom, rows

    def locate(self, screen: Screen) -> int | None:
        located = self._locate(screen)
        return None if located is None else located[0] + 1

    def _facts(self, screen: Screen, expected: str):
        located = self._locate(screen)
        if located is None:
            return None
        top, _, rows = located
        candidates = soft_wrap_candidates(rows)
        if candidates is None:
            return None
        empty = all(row == "" for row in rows)
        idle = not any(_WORKING_ROW.match(line) for line in screen.lines[:top])
        return top, expected in candidates, empty, idle

    def classify(self, screen: Screen, expected: str) -> ComposerState:
        return composer_verdict(self._facts(screen, expected))

    def receipt(self, screen: Screen, expected: str) -> ReceiptState:
        return receipt_verdict(self._facts(screen, expected), lambda top: _row_run(screen.lines[:top], expected))


def _row_run(lines, expected: str) -> bool:
    """Some run of up to four rows holds exactly the text (optionally after a queued prefix):
    it starts a row and ends a row, so a quotation inside other text does not count."""
    wanted = {compact(prefix + expected) for prefix in ("",) + _QUEUED_PREFIXES}
    rows = [compact(line) for line in lines]
    for start in range(len(rows)):
        joined = ""
        for row in rows[start:start + 4]:
            joined += row
            if joined in wanted:
                return True
    return False
