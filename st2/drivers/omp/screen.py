"""The omp TUI composer (omp 18.2.3, a pi fork, ``captures/omp/18.2.3/screens/``): omp's default
"band" composer shape, a status band row directly above a prompt gutter ``╰─ `` row, with any
further composer rows below it indented by the gutter's width.

- The status band is one row holding ``▶`` then a context gauge ``<n>%`` and the window size
  ``<n>K`` (or ``M``). omp is located only when the lowest ``╰─`` prompt row (in the first column and followed by a space or nothing,
  so never a box's bottom edge ``╰──…╯``) sits directly under such a band, so another harness is never taken
  for omp.
- The composer is the prompt row's text after the gutter plus the rows below it, trailing blank
  rows dropped. Empty is a composer whose rows are all blank.
- Idle is positive: the band starts with omp's idle glyph ``π`` (a running turn replaces it with
  a spinner and the elapsed time) and no ``Working…`` row is drawn above. Anything else blocks
  Return and paste.
- A submitted prompt, and one sent during a turn (omp steers it into the running turn), is a
  transcript row holding exactly the text (wrapped rows admitted).

omp ignores a Return while its composer's bootstrap submit gate is up (18.2.3:
``editor.disableSubmit`` from the composer's construction until the last step of
``InteractiveMode.init()``, which first runs the ``session_start`` hooks, where st2's extension
reports ``idle``): the composer is already drawn idle, a paste or typed text lands in it, and the
Return leaves it there. On two loaded cores that window lasts seconds. Nothing on the screen or
in the extension API shows the gate, so such a composer reads as retained after the Return, and
DING's one bare retry Return on a composer proven to retain the text (after its retry backoff) is
what submits it (``tests/ding/test_omp_startup_gate_lab.py`` holds omp inside the gate).
"""

from __future__ import annotations

import re

from st2.drivers.screen import (ComposerState, ReceiptState, Screen, compact, composer_verdict, receipt_verdict,
                             soft_wrap_candidates)

GUTTER = "╰─"
_BAND = re.compile(r"▶.*?\d+(?:\.\d+)?%.*\d+(?:\.\d+)?[KM]")
_IDLE_GLYPH = "π"
_WORKING_ROW = re.compile(r"^\s*\S\s+Working…")


class Omp:
    name = "omp"

    def _locate(self, screen: Screen) -> tuple[int, list[str]] | None:
        lines = screen.lines
        prompts = [index for index, line in enumerate(lines)
                   if line.startswith(GUTTER + " ") or line.rstrip() == GUTTER]
        if not prompts:
            return None
        prompt = prompts[-1]
        if prompt == 0 or not _BAND.search(lines[prompt - 1]):
            return None
        first = lines[prompt][len(GUTTER):].strip()
        rows = [first] + [line.strip() for line in lines[prompt + 1:]]
        while len(rows) > 1 and rows[-1] == "":
            rows.pop()
        return prompt, rows

    def locate(self, screen: Screen) -> int | None:
        located = self._locate(screen)
        return None if located is None else located[0]

    def _facts(self, screen: Screen, expected: str):
        located = self._locate(screen)
        if located is None:
            return None
        prompt, rows = located
        candidates = soft_wrap_candidates(rows)
        if candidates is None:
            return None
        empty = all(row == "" for row in rows)
        band = screen.lines[prompt - 1].strip()
        idle = (band.split(" ", 1)[0] == _IDLE_GLYPH
                and not any(_WORKING_ROW.match(line) for line in screen.lines[:prompt]))
        return prompt - 1, expected in candidates, empty, idle

    def classify(self, screen: Screen, expected: str) -> ComposerState:
        return composer_verdict(self._facts(screen, expected))

    def receipt(self, screen: Screen, expected: str) -> ReceiptState:
        return receipt_verdict(self._facts(screen, expected), lambda band: _row_run(screen.lines[:band], expected))


def _row_run(lines, expected: str) -> bool:
    """Some run of up to four rows holds exactly the text: it starts a row and ends a row, so a
    quotation inside other text does not count."""
    wanted = compact(expected)
    rows = [compact(line) for line in lines]
    for start in range(len(rows)):
        joined = ""
        for row in rows[start:start + 4]:
            joined += row
            if joined == wanted:
                return True
    return False
