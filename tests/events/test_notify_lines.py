"""The words of the notify log (unit tier): a failed hook's stderr tail as one escaped line, and
the summary of a window's held-back runs, pinned as full strings."""

from __future__ import annotations

from st2.declarations.catalog import NotifyHook
from st2.events.notify import QUEUE_BOUND, Tally, stderr_words


def test_a_short_stderr_is_shown_whole_and_escaped_a_long_one_by_its_tail_with_its_size() -> None:
    assert stderr_words(b"broken\n\x1b[31mhook\x07\n", 18) == "broken | \\x1b[31mhook\\x07"
    assert stderr_words(b"", 0) == ""
    tail = b"x" * 4096
    assert stderr_words(tail, 10_000_000) == "…" + "x" * 200 + " [10000000 bytes of stderr; the last 200 characters shown]"


def test_a_windows_summary_counts_its_runs_and_names_why_they_were_held() -> None:
    hook = NotifyHook(("blocked",), ("sh", "-c", "true"), rate_limit_seconds=60.0, where="catalog.kdl:2:5")
    suppressed = Tally(hook, "blocked", "h.a", "suppressed", until=0.0, count=1, first=2, last=2)
    assert suppressed.line() == "catalog.kdl:2:5: blocked h.a: 1 run suppressed (#2; rate-limit 60s per seat and kind)"
    dropped = Tally(hook, "stale", "fleet", "dropped", until=0.0, count=7, first=9, last=40)
    assert dropped.line() == f"catalog.kdl:2:5: stale fleet: 7 runs dropped (#9-#40; {QUEUE_BOUND} runs already waiting)"
