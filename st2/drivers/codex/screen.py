"""The Codex TUI composer, located on the raw screen by its styled ``›`` prompt.

The styling is the evidence: the same character in transcript output is not a composer. The
marker sets below are the sequences the Codex renderer emits for an empty composer (the prompt
followed by a dim placeholder) and for one holding text: the variants the original documents for
earlier renderers, and the one 0.171.0 draws (``captures/codex/0.171.0/screens/``). The lowest
occurrence is the live composer, reported as a row so it compares with adapters that match
stripped text. 0.171.0 styles the transcript's submitted prompts ``ESC[1;2m› ESC[0m``, which an
earlier renderer used for a typed composer; that variant is therefore not accepted as a composer
(it would let an old submitted prompt stand in for the live one).

Idle needs exactly one model status row (``gpt-…``) below the composer, carrying an absolute or
``~/`` directory field or a ``Context <n>% left|used`` field, and nothing after it but, on
0.171.0, one key-hint row (``… ? for shortcuts``). A running turn (``Working (… esc to
interrupt)``) blocks. Submitted prompts are echoed as ``› <text>`` above the composer; a prompt
queued during a turn is listed under ``Messages to be submitted after next tool call``.
"""

from __future__ import annotations

import re

from st2.drivers.screen import (ComposerState, ReceiptState, Screen, compact, soft_wrap_candidates,
                             strip_ansi)

EMPTY_MARKERS = (
    "\x1b[1;22m›\x1b[1C\x1b[22;2m",
    "\x1b[1m›\x1b[1C\x1b[22;2m",
    "\x1b[1m›\x1b[22m \x1b[2m",
    "\x1b[1m›\x1b[0m\x1b[39m\x1b[49m \x1b[2m",     # 0.171.0
)
TYPED_MARKERS = (
    "\x1b[1;22m›\x1b[1C\x1b[0m",
    "\x1b[1m›\x1b[1C\x1b[0m",
    "\x1b[1m›\x1b[22m ",
    "\x1b[1m›\x1b[0m\x1b[39m\x1b[49m ",             # 0.171.0
)
QUEUED_HEADING = "Messages to be submitted after next tool call"
_BLOCKING_TEXT = ("esc to interrupt", "Esc to interrupt", "ctrl+c to interrupt", "Working (",
                  "press esc to interrupt and send")
_CHOICE_ROW = re.compile(r"^\s*(?:›\s*)?[1-9]\.\s+\S")
_CONTEXT_FIELD = re.compile(r"Context (\d{1,3})% (left|used)")


class Codex:
    name = "codex"

    def _locate(self, screen: Screen) -> tuple[int, bool, list[str]] | None:
        """(row, empty, input rows) of the lowest styled prompt."""
        best: tuple[int, int, bool, str] | None = None
        for row, raw in enumerate(screen.raw_lines):
            for markers, empty in ((EMPTY_MARKERS, True), (TYPED_MARKERS, False)):
                for marker in markers:
                    offset = raw.rfind(marker)
                    # At one offset the empty marker (prompt + dim placeholder) is the longer
                    # match of the same prefix, so it wins the tie.
                    if offset >= 0 and (best is None or (row, offset, empty) > (best[0], best[1], best[2])):
                        best = (row, offset, empty, raw[offset + len(marker):])
        if best is None:
            return None
        row, _, empty, rest = best
        if empty:
            return row, True, []
        inputs = [strip_ansi(rest).strip()]
        for following in screen.lines[row + 1:]:
            if not following.strip() or not following.startswith("  "):
                break
            inputs.append(following.strip())
        return row, False, inputs

    def locate(self, screen: Screen) -> int | None:
        located = self._locate(screen)
        return None if located is None else located[0]

    def _idle(self, screen: Screen, row: int) -> bool:
        if blocked(screen.lines):
            return False
        below = [line.strip() for line in screen.lines[row + 1:] if line.strip()]
        status = [line for line in below if line.startswith("gpt-")]
        if len(status) != 1 or below[0] != status[0]:
            return False
        trailing = below[1:]
        if len(trailing) > 1 or (trailing and "? for shortcuts" not in trailing[0]):
            return False
        fields = status[0].split(" · ")[1:]
        return any(field.startswith(("/", "~/")) or _CONTEXT_FIELD.fullmatch(field) for field in fields)

    def classify(self, screen: Screen, expected: str) -> ComposerState:
        located = self._locate(screen)
        if located is None:
            return ComposerState.AMBIGUOUS
        row, empty, inputs = located
        idle = self._idle(screen, row)
        if empty:
            return ComposerState.EMPTY_SAFE if idle else ComposerState.AMBIGUOUS
        candidates = soft_wrap_candidates(inputs)
        if candidates is None:
            return ComposerState.AMBIGUOUS
        if expected in candidates:
            return ComposerState.EXACT_SAFE if idle else ComposerState.EXACT_BLOCKED
        return ComposerState.CHANGED

    def receipt(self, screen: Screen, expected: str) -> ReceiptState:
        located = self._locate(screen)
        if located is None:
            return ReceiptState.UNPROVEN
        row, empty, inputs = located
        if empty:
            above = "".join(screen.lines[:row])
            wanted = compact(expected)
            submitted = "›" + wanted in compact(above)
            _, heading, queued = above.partition(QUEUED_HEADING)
            if submitted or (heading and wanted in compact(queued)):
                return ReceiptState.ACCEPTED
            return ReceiptState.NOT_RETAINED
        candidates = soft_wrap_candidates(inputs)
        if candidates is None:
            return ReceiptState.UNPROVEN
        if expected in candidates:
            return ReceiptState.RETAINED_SAFE if self._idle(screen, row) else ReceiptState.RETAINED_BLOCKED
        return ReceiptState.NOT_RETAINED


def blocked(lines) -> bool:
    text = "\n".join(lines)
    if any(marker in text for marker in _BLOCKING_TEXT):
        return True
    return sum(1 for line in lines if _CHOICE_ROW.match(line)) >= 2
