"""Screen grammars over real captures (Claude Code 2.1.197, ``captures/claude-code/2.1.197/screens``)
and over the line grammar's shapes; each state is asserted together with the state it must not
be mistaken for."""

from __future__ import annotations

from pathlib import Path

import pytest

from st2.ding.harness import TUI_ADAPTERS, adapters_for
from st2.drivers.claude.screen import Claude, trust_dialog
from st2.drivers.screen import ComposerState, ReceiptState, Screen, classify, receipt

REPO = Path(__file__).resolve().parents[2]
CLAUDE = REPO / "captures" / "claude-code" / "2.1.197" / "screens"
FIRST = "[DING] new st2 message: [id:p3p3p3] build the parser (from demo.planner); check your inbox"
QUEUED = "[DING] new st2 message: [id:q2q2q2] review the diff (from demo.planner); check your inbox"
OTHER = "[DING] new st2 message: [id:zzzzzz] something else (from x); check your inbox"


def claude_screen(name: str) -> Screen:
    x, y, width = (int(field) for field in (CLAUDE / f"{name}.cursor").read_text().split())
    return Screen.parse((CLAUDE / f"{name}.ansi").read_text(), x, y, width)


def test_claude_empty_composer_is_safe_to_paste_into():
    screen = claude_screen("empty")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.EMPTY_SAFE
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED  # empty is not delivery


def test_claude_human_draft_is_changed_never_empty():
    screen = claude_screen("draft")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED


def test_claude_pasted_notice_is_exact_and_return_safe_only_for_that_notice():
    screen = claude_screen("pasted")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.EXACT_SAFE
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.RETAINED_SAFE
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.CHANGED


def test_claude_submitted_notice_is_accepted_and_a_never_sent_one_is_not():
    screen = claude_screen("submitted")
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.ACCEPTED
    assert receipt(screen, OTHER, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.EMPTY_SAFE  # a finished turn is idle


def test_claude_turn_in_flight_blocks_paste_and_return():
    busy = claude_screen("busy")
    assert classify(busy, QUEUED, TUI_ADAPTERS) is ComposerState.AMBIGUOUS  # empty, but not idle
    pasted = claude_screen("busy-pasted")
    assert classify(pasted, QUEUED, TUI_ADAPTERS) is ComposerState.EXACT_BLOCKED
    assert receipt(pasted, QUEUED, TUI_ADAPTERS) is ReceiptState.RETAINED_BLOCKED


def test_claude_queued_notice_is_accepted_and_its_placeholder_is_not_a_draft():
    screen = claude_screen("queued")
    assert receipt(screen, QUEUED, TUI_ADAPTERS) is ReceiptState.ACCEPTED
    assert classify(screen, OTHER, TUI_ADAPTERS) is not ComposerState.CHANGED
    assert receipt(claude_screen("queued-submitted"), QUEUED, TUI_ADAPTERS) is ReceiptState.ACCEPTED


def test_claude_permission_prompt_is_never_a_composer_to_type_into():
    screen = claude_screen("permission")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.AMBIGUOUS
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.UNPROVEN


def test_claude_trust_dialog_is_told_from_a_composer_and_a_permission_prompt():
    dialog = claude_screen("trust")
    assert trust_dialog(dialog.lines)
    assert classify(dialog, FIRST, TUI_ADAPTERS) is ComposerState.AMBIGUOUS   # DING never types into it
    for name in ("empty", "draft", "busy", "permission"):
        assert not trust_dialog(claude_screen(name).lines), name


def test_claude_trust_dialog_needs_its_heading_its_two_rows_and_nothing_drawn_below():
    lines = claude_screen("trust").lines
    answered = Screen.parse(claude_screen("trust").raw + "\n" + claude_screen("empty").raw + "\n").lines
    assert not trust_dialog(answered)   # the REPL's composer drawn below it: answered
    assert not trust_dialog([line for line in lines if "Accessing workspace:" not in line])
    assert not trust_dialog([line for line in lines if "No, exit" not in line])
    assert not trust_dialog([line.replace("Yes, I trust this folder", "Yes, I trust this project") for line in lines])
    echoed = claude_screen("draft").raw.replace("half a thought about the parser",
                                                "1. Yes, I trust this folder 2. No, exit")
    assert not trust_dialog(Screen.parse(echoed).lines)   # the words typed into a composer


def test_claude_screen_in_scrollback_does_not_outrank_the_live_composer():
    live = claude_screen("draft")
    transcript = claude_screen("empty")
    combined = Screen.parse(transcript.raw + "\n" + live.raw + "\n")
    assert Claude().locate(combined) == len(transcript.raw_lines) + Claude().locate(live)
    assert classify(combined, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED


def test_a_claude_screen_proves_nothing_to_a_harness_without_a_grammar():
    assert classify(claude_screen("empty"), FIRST, adapters_for("opencode")) is ComposerState.AMBIGUOUS
    assert receipt(claude_screen("submitted"), FIRST, adapters_for("opencode")) is ReceiptState.UNPROVEN


# --- the line grammar (shell seats and the stand-in TUI) ----------------------------------------

SHELL = adapters_for(None)
NOTICE = "[DING] n"


def line_screen(rows: list[str], x: int, y: int, width: int = 80) -> Screen:
    return Screen.parse("\n".join(rows) + "\n", x, y, width)


@pytest.mark.parametrize("rows, x, y, state", [
    (["builder: waiting for mail", ""], 0, 1, ComposerState.EMPTY_SAFE),
    (["older", "\x1b[2mTry \"say hi\"\x1b[0m"], 0, 1, ComposerState.EMPTY_SAFE),      # dim placeholder
    (["older", "Try \"say hi\""], 0, 1, ComposerState.CHANGED),                      # same text, undimmed
    (["older", "draft"], 5, 1, ComposerState.CHANGED),
    (["older", "dr\x1b[2maft"], 2, 1, ComposerState.CHANGED),                         # typed, then dim
    (["older", "draft more"], 2, 1, ComposerState.CHANGED),                           # cursor mid-draft
    (["older", NOTICE], len(NOTICE), 1, ComposerState.EXACT_SAFE),
    (["x" * 80, "wrapped tail"], 12, 1, ComposerState.AMBIGUOUS),                     # unproven wrap
])
def test_line_grammar_states(rows, x, y, state):
    assert classify(line_screen(rows, x, y), NOTICE, SHELL) is state


@pytest.mark.parametrize("rows, x, y, state", [
    (["older", NOTICE, ""], 0, 2, ReceiptState.ACCEPTED),
    (["older", f"queued: {NOTICE}", ""], 0, 2, ReceiptState.ACCEPTED),
    (["older", NOTICE], len(NOTICE), 1, ReceiptState.RETAINED_SAFE),
    (["older", ""], 0, 1, ReceiptState.NOT_RETAINED),                                  # gone is not delivered
    ([NOTICE, "draft"], 5, 1, ReceiptState.NOT_RETAINED),                              # a draft hides nothing
    (["x" * 80, "tail"], 4, 1, ReceiptState.UNPROVEN),
])
def test_line_grammar_receipts(rows, x, y, state):
    assert receipt(line_screen(rows, x, y), NOTICE, SHELL) is state


def test_line_grammar_needs_a_cursor():
    assert classify(Screen.parse("anything\n"), NOTICE, SHELL) is ComposerState.AMBIGUOUS


# --- Codex 0.171.0 (captures/codex/0.171.0/screens) ---------------------------------------------

CODEX = REPO / "captures" / "codex" / "0.171.0" / "screens"


def codex_screen(name: str) -> Screen:
    x, y, width = (int(field) for field in (CODEX / f"{name}.cursor").read_text().split())
    return Screen.parse((CODEX / f"{name}.ansi").read_text(), x, y, width)


def test_codex_empty_composer_with_its_dim_placeholder_is_safe():
    screen = codex_screen("empty")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.EMPTY_SAFE
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED


def test_codex_human_draft_is_changed_never_empty():
    screen = codex_screen("draft")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED


def test_codex_pasted_notice_is_exact_and_return_safe_only_for_that_notice():
    screen = codex_screen("pasted")
    assert classify(screen, FIRST, TUI_ADAPTERS) is ComposerState.EXACT_SAFE
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.RETAINED_SAFE
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.CHANGED


def test_codex_submitted_notice_is_accepted_and_a_never_sent_one_is_not():
    screen = codex_screen("submitted")
    assert receipt(screen, FIRST, TUI_ADAPTERS) is ReceiptState.ACCEPTED
    assert receipt(screen, OTHER, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.EMPTY_SAFE


def test_codex_running_turn_blocks_paste_and_return():
    assert classify(codex_screen("busy"), QUEUED, TUI_ADAPTERS) is ComposerState.AMBIGUOUS
    pasted = codex_screen("busy-pasted")
    assert classify(pasted, QUEUED, TUI_ADAPTERS) is ComposerState.EXACT_BLOCKED
    assert receipt(pasted, QUEUED, TUI_ADAPTERS) is ReceiptState.RETAINED_BLOCKED


def test_codex_queued_notice_is_accepted_and_an_unqueued_one_is_not():
    screen = codex_screen("queued")
    assert receipt(screen, QUEUED, TUI_ADAPTERS) is ReceiptState.ACCEPTED
    assert receipt(screen, OTHER, TUI_ADAPTERS) is ReceiptState.NOT_RETAINED
    assert receipt(codex_screen("queued-submitted"), QUEUED, TUI_ADAPTERS) is ReceiptState.ACCEPTED


def test_the_lowest_composer_decides_across_harnesses():
    codex_then_claude = Screen.parse(codex_screen("pasted").raw + "\n" + claude_screen("draft").raw + "\n")
    assert classify(codex_then_claude, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED  # Claude's live draft
    claude_then_codex = Screen.parse(claude_screen("pasted").raw + "\n" + codex_screen("draft").raw + "\n")
    assert classify(claude_then_codex, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED  # Codex's live draft
    claude_then_codex_pasted = Screen.parse(claude_screen("draft").raw + "\n" + codex_screen("pasted").raw + "\n")
    assert classify(claude_then_codex_pasted, FIRST, TUI_ADAPTERS) is ComposerState.EXACT_SAFE


# --- pi 0.73.1 (captures/pi/0.73.1/screens) -------------------------------------------------------

PI = REPO / "captures" / "pi" / "0.73.1" / "screens"


def pi_screen(name: str) -> Screen:
    x, y, width = (int(field) for field in (PI / f"{name}.cursor").read_text().split())
    return Screen.parse((PI / f"{name}.ansi").read_text(), x, y, width)


@pytest.mark.parametrize("name, expected, state, receipt_state", [
    ("empty", FIRST, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),
    ("draft", FIRST, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),
    ("pasted", FIRST, ComposerState.EXACT_SAFE, ReceiptState.RETAINED_SAFE),
    ("pasted", OTHER, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),
    ("submitted", FIRST, ComposerState.EMPTY_SAFE, ReceiptState.ACCEPTED),
    ("submitted", OTHER, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),
    ("busy", QUEUED, ComposerState.AMBIGUOUS, ReceiptState.NOT_RETAINED),           # empty but working
    ("busy-pasted", QUEUED, ComposerState.EXACT_BLOCKED, ReceiptState.RETAINED_BLOCKED),
    ("queued", QUEUED, ComposerState.AMBIGUOUS, ReceiptState.ACCEPTED),            # a steering message
    ("queued", OTHER, ComposerState.AMBIGUOUS, ReceiptState.NOT_RETAINED),
    ("queued-submitted", QUEUED, ComposerState.EMPTY_SAFE, ReceiptState.ACCEPTED),
    ("compacted-empty", OTHER, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),   # footer reads ?/200k
    ("compacted-empty", FIRST, ComposerState.EMPTY_SAFE, ReceiptState.ACCEPTED),       # FIRST is in the transcript
    ("compacted-pasted", FIRST, ComposerState.EXACT_SAFE, ReceiptState.RETAINED_SAFE),
    ("compacted-pasted", OTHER, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),
])
def test_pi_screens(name, expected, state, receipt_state):
    screen = pi_screen(name)
    assert (classify(screen, expected, TUI_ADAPTERS), receipt(screen, expected, TUI_ADAPTERS)) == (state, receipt_state)


def test_pi_is_never_located_on_a_claude_screen_and_claude_never_on_pi():
    from st2.drivers.pi.screen import Pi

    assert Pi().locate(claude_screen("pasted")) is None
    assert Claude().locate(pi_screen("pasted")) is None
    assert Claude().locate(pi_screen("compacted-empty")) is None


def pi_usage_row_replaced(name: str, old: str, new: str) -> Screen:
    """A pi capture with its context-usage row's gauge rewritten (the row must hold ``old`` once)."""
    raw = (PI / f"{name}.ansi").read_text()
    assert raw.count(old) == 1
    x, y, width = (int(field) for field in (PI / f"{name}.cursor").read_text().split())
    return Screen.parse(raw.replace(old, new), x, y, width)


@pytest.mark.parametrize("gauge", ["??/200k", "x?/200k", "?%/200k", "/200k", "? /200k", "-/200k", "?/200"])
def test_pi_post_compact_gauge_admits_exactly_a_question_mark(gauge):
    """After ``/compact`` pi draws ``?/200k`` in place of ``<n>%/200k`` (captured); the footer shape
    stays strict: any other stand-in for the percent is not pi's footer, so nothing is located."""
    from st2.drivers.pi.screen import Pi

    assert Pi().locate(pi_usage_row_replaced("compacted-empty", "?/200k", "?/200k")) is not None
    screen = pi_usage_row_replaced("compacted-empty", "?/200k", gauge)
    assert Pi().locate(screen) is None
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.AMBIGUOUS


# --- omp 18.2.3 (captures/omp/18.2.3/screens) -----------------------------------------------------

OMP = REPO / "captures" / "omp" / "18.2.3" / "screens"
OMP_STATES = ("empty", "draft", "pasted", "submitted", "busy", "busy-pasted", "queued", "queued-submitted",
              "compacted-empty")


def omp_screen(name: str) -> Screen:
    x, y, width = (int(field) for field in (OMP / f"{name}.cursor").read_text().split())
    return Screen.parse((OMP / f"{name}.ansi").read_text(), x, y, width)


@pytest.mark.parametrize("name, expected, state, receipt_state", [
    ("empty", FIRST, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),
    ("draft", FIRST, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),
    ("pasted", FIRST, ComposerState.EXACT_SAFE, ReceiptState.RETAINED_SAFE),
    ("pasted", OTHER, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),
    ("submitted", FIRST, ComposerState.EMPTY_SAFE, ReceiptState.ACCEPTED),
    ("submitted", OTHER, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),
    ("busy", QUEUED, ComposerState.AMBIGUOUS, ReceiptState.NOT_RETAINED),           # empty but working
    ("busy-pasted", QUEUED, ComposerState.EXACT_BLOCKED, ReceiptState.RETAINED_BLOCKED),
    ("busy-pasted", FIRST, ComposerState.CHANGED, ReceiptState.NOT_RETAINED),      # the other notice
    ("queued", QUEUED, ComposerState.AMBIGUOUS, ReceiptState.ACCEPTED),            # steered into the turn
    ("queued", OTHER, ComposerState.AMBIGUOUS, ReceiptState.NOT_RETAINED),
    ("queued-submitted", QUEUED, ComposerState.EMPTY_SAFE, ReceiptState.ACCEPTED),
    ("queued-submitted", OTHER, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),
    ("compacted-empty", OTHER, ComposerState.EMPTY_SAFE, ReceiptState.NOT_RETAINED),  # band keeps its <n>%
])
def test_omp_screens(name, expected, state, receipt_state):
    screen = omp_screen(name)
    for adapters in (TUI_ADAPTERS, adapters_for("omp")):
        assert (classify(screen, expected, adapters), receipt(screen, expected, adapters)) == (state, receipt_state)


def test_omp_seat_reads_its_screens_where_it_used_to_hold():
    assert classify(omp_screen("empty"), FIRST, adapters_for("omp")) is ComposerState.EMPTY_SAFE
    assert classify(omp_screen("empty"), FIRST, adapters_for("opencode")) is ComposerState.AMBIGUOUS


@pytest.mark.parametrize("name", OMP_STATES)
def test_omp_screens_are_omp_and_only_omp(name):
    from st2.drivers.codex.screen import Codex
    from st2.drivers.omp.screen import Omp
    from st2.drivers.pi.screen import Pi

    screen = omp_screen(name)
    assert Omp().locate(screen) is not None
    assert [adapter.locate(screen) for adapter in (Claude(), Codex(), Pi())] == [None, None, None]


@pytest.mark.parametrize("screen_of, name", [(claude_screen, "pasted"), (codex_screen, "pasted"),
                                             (pi_screen, "pasted"), (pi_screen, "busy")])
def test_omp_is_never_located_on_another_harness_screen(screen_of, name):
    from st2.drivers.omp.screen import Omp

    assert Omp().locate(screen_of(name)) is None


def test_omp_busy_band_without_a_working_row_is_still_busy():
    """The spinner in the status band alone blocks: ``queued`` has no ``Working…`` row."""
    screen = omp_screen("queued")
    assert "Working…" not in screen.plain
    assert classify(screen, OTHER, TUI_ADAPTERS) is ComposerState.AMBIGUOUS
    spinner, rest = screen.lines[-2].split(" > ", 1)
    assert spinner.strip().endswith("s") and "π" not in spinner  # a spinner and the elapsed time
    idle_band = Screen.parse("\n".join(screen.lines[:-2] + (" π > " + rest, screen.lines[-1])))
    assert classify(idle_band, OTHER, TUI_ADAPTERS) is ComposerState.EMPTY_SAFE  # its firing twin


def test_omp_box_bottom_edge_is_not_a_prompt_row():
    """A tool box's ``╰──…╯`` edge over the band never stands for the composer."""
    screen = omp_screen("empty")
    rows = list(screen.raw_lines)
    prompt = next(index for index, line in enumerate(screen.lines) if line.rstrip() == "╰─")
    rows[prompt] = "╰" + "─" * 60 + "╯"
    assert classify(Screen.parse("\n".join(rows) + "\n"), FIRST, TUI_ADAPTERS) is ComposerState.AMBIGUOUS


def test_omp_screen_in_scrollback_does_not_outrank_the_live_composer():
    from st2.drivers.omp.screen import Omp

    live, transcript = omp_screen("draft"), omp_screen("pasted")
    combined = Screen.parse(transcript.raw + "\n" + live.raw + "\n")
    assert Omp().locate(combined) == len(transcript.raw_lines) + Omp().locate(live)
    assert classify(combined, FIRST, TUI_ADAPTERS) is ComposerState.CHANGED
