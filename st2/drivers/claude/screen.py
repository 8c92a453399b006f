"""The Claude Code composer: a ``❯`` row between the last two full-width rules, the
permission-mode footer below (the grammar the original documents for Claude Code 2.1.x, checked
against the real 2.1.197 screens in ``captures/claude-code-2.1.197/screens/``).

- Rules are lines whose trimmed content is at least 40 ``─``. The prompt is ``❯`` followed by a
  no-break space (or a space); it is removed before any trimming, because the no-break space is
  whitespace and trimming first would erase the prompt of an empty composer.
- Idle needs a footer below the lower rule and no blocking shape on the screen. A footer showing
  the permission-mode marker ``⏵⏵`` must also say ``permissions on`` (the mode the original
  proved). The default mode of 2.1.197 draws no mode marker at all: its footer is the status
  line plus, only while the composer is empty, a ``← for agents`` hint — identical in idle and
  busy panes (captured ``busy`` and ``empty`` screens) — so there the in-flight progress line is
  the one signal that separates a running turn from an idle one, and it is always drawn above
  the composer during a turn (captured ``busy``, ``busy-pasted``, ``queued``).
- Empty is an empty composer, the rotating ``Try "<example>"`` placeholder (bounded,
  single-line), or ``Press up to edit queued messages`` (drawn dim, cursor at its first cell,
  after a prompt was queued during a turn — captured ``queued``).
- An active turn is the progress line: one non-alphanumeric glyph, one alphabetic word and an
  ellipsis (``✻ Frolicking… (3m 35s)``); a finished turn says ``✻ Brewed for 5s`` and must not
  block. Interrupt hints, plan/retry notices and numbered choice menus block too.
- Submitted prompts are echoed as ``❯ <text>`` above the composer; a queued prompt while a turn
  runs is listed under the composer area. Either, with an empty composer, is acceptance.
- The workspace trust dialog (:func:`trust_dialog`, captured ``trust``): drawn before the REPL,
  and before any hook fires, when the config dir's ``.claude.json`` holds no trust for the
  workspace — an ``Accessing workspace:`` heading, then the choice rows ``1. Yes, I trust this
  folder`` and ``2. No, exit``, with no full-width rule (a composer) below them.
"""

from __future__ import annotations

import re

from st2.drivers.screen import (ComposerState, ReceiptState, Screen, compact, composer_verdict, receipt_verdict,
                             soft_wrap_candidates)

PROMPT = "❯"
_PROMPT_PREFIXES = ("❯\u00a0", "❯ ")
_BLOCKING_TEXT = (
    "esc to interrupt", "Esc to interrupt", "ctrl+c to interrupt", "Working (",
    "press esc to interrupt and send", "Our systems are thinking a bit more",
    "Retry with a faster model", "Create a plan?", "Do you want to proceed?",
)
_CHOICE_ROW = re.compile(r"^\s*(?:❯\s*)?[1-9]\.\s+\S")
_PLACEHOLDER_EXAMPLE_MAX = 72


class Claude:
    name = "claude"

    def _locate(self, screen: Screen) -> tuple[int, list[str], list[str]] | None:
        lines = screen.lines
        rules = [index for index, line in enumerate(lines)
                 if len(line.strip()) >= 40 and set(line.strip()) == {"─"}]
        if len(rules) < 2:
            return None
        top, bottom = rules[-2], rules[-1]
        rows = list(lines[top + 1:bottom])
        if not rows:
            return None
        first = next((rows[0][len(prefix):] for prefix in _PROMPT_PREFIXES
                      if rows[0].startswith(prefix)), None)
        if first is None:
            return None
        inputs = [first.strip()] + [row.strip() for row in rows[1:]]
        while len(inputs) > 1 and inputs[-1] == "":
            inputs.pop()
        return top + 1, inputs, list(lines[bottom + 1:])

    def locate(self, screen: Screen) -> int | None:
        located = self._locate(screen)
        return None if located is None else located[0]

    def _facts(self, screen: Screen, expected: str):
        located = self._locate(screen)
        if located is None:
            return None
        row, inputs, footer = located
        candidates = soft_wrap_candidates(inputs)
        if candidates is None:
            return None
        exact = expected in candidates
        empty = len(inputs) == 1 and (inputs[0] == "" or is_placeholder(inputs[0]))
        idle = idle_footer(footer) and not blocked(screen.lines)
        return row, exact, empty, idle

    def classify(self, screen: Screen, expected: str) -> ComposerState:
        return composer_verdict(self._facts(screen, expected))

    def receipt(self, screen: Screen, expected: str) -> ReceiptState:
        return receipt_verdict(self._facts(screen, expected), lambda row: accepted(screen.lines, row, expected))


QUEUED_PLACEHOLDER = "Press up to edit queued messages"


def is_placeholder(text: str) -> bool:
    """The rotating ``Try "<example>"`` suggestion of an unused composer, or the queued-prompt
    hint."""
    if text == QUEUED_PLACEHOLDER:
        return True
    if not (text.startswith('Try "') and text.endswith('"') and len(text) > 6):
        return False
    example = text[5:-1]
    return len(example) <= _PLACEHOLDER_EXAMPLE_MAX and example.isprintable()


def idle_footer(footer: list[str]) -> bool:
    text = "\n".join(footer)
    if not text.strip():
        return False
    if "⏵⏵" in text:
        return "permissions on" in text
    return True


def turn_in_flight(lines) -> bool:
    for line in lines:
        head, ellipsis, _ = line.strip().partition("…")
        if not ellipsis:
            continue
        tokens = head.split()
        if (len(tokens) == 2 and len(tokens[0]) == 1 and not tokens[0].isalnum()
                and tokens[1].isalpha()):
            return True
    return False


def blocked(lines) -> bool:
    if turn_in_flight(lines):
        return True
    text = "\n".join(lines)
    if any(marker in text for marker in _BLOCKING_TEXT):
        return True
    return sum(1 for line in lines if _CHOICE_ROW.match(line)) >= 2


_TRUST_HEADING = "Accessing workspace:"
_TRUST_YES = re.compile(r"^\s*(?:❯\s*)?1\.\s+Yes, I trust this folder\s*$")
_TRUST_NO = re.compile(r"^\s*(?:❯\s*)?2\.\s+No, exit\s*$")


def trust_dialog(lines) -> bool:
    """Whether the screen's last drawing is Claude's workspace trust dialog (2.1.197: the
    ``Accessing workspace:`` heading, then ``1. Yes, I trust this folder`` directly followed by
    ``2. No, exit``), waiting for a human. A composer drawn below the choices (two full-width
    rules), or the words anywhere but as the dialog's rows, is not the dialog."""
    lines = list(lines)
    for index in range(len(lines) - 2, -1, -1):
        if _TRUST_YES.match(lines[index]) and _TRUST_NO.match(lines[index + 1]):
            break
    else:
        return False
    if not any(line.strip() == _TRUST_HEADING for line in lines[:index]):
        return False
    return not any(len(line.strip()) >= 40 and set(line.strip()) == {"─"} for line in lines[index + 2:])


def accepted(lines, composer_row: int, expected: str) -> bool:
    """The notice echoed as a submitted prompt (``❯ <notice>``, wraps admitted) above the
    composer, or listed as queued anywhere outside the composer."""
    above = compact("".join(lines[:composer_row]))
    below = compact("".join(lines[composer_row + 1:]))
    wanted = compact(expected)
    return (PROMPT + wanted) in above or wanted in below
