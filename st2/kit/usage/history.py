"""The usage-history log (``DELEGATION_KIT_USAGE_HISTORY``): one sample line per parsed
snapshot, appended by `st2 usage verdict` (its single append author) and read by the trend
reporter and by the verdict itself for a roll witness.

The sample line, space-separated ``key=value`` and order-insensitive for readers::

    updated_at=<epoch> pct=<float> resets_at=<epoch> verdict=<word> login_at=<epoch>
        [ account=<word>][ tier=<word>][ pct_7d=<float> resets_7d=<epoch>][ tokens_in=<n> tokens_out=<n>]

Values are the snapshot's raw text, never smoothed or corrected at write time (a later
correction is evidence about an earlier sample, and only the reader has both). Optional groups
are omitted, never written empty; a value that could not survive the space-separated grammar
(whitespace or ``=`` inside) is omitted rather than mangled. ``login_at`` is the credentials
file's mtime (0 when there is none).

Standard library only: the verdict hot path imports this.
"""

from __future__ import annotations


from st2.fs.log import append_line
from st2.fs.read import HISTORY_LIMIT, read_bounded
from st2.records.usage_snapshot import Snapshot, is_word


def sample_line(snapshot: Snapshot, verdict: str, login_at: int) -> str:
    """The sample line (without newline) for a parsed ``snapshot`` judged ``verdict``."""
    fields = [
        f"updated_at={snapshot.updated_at}",
        f"pct={snapshot.five_hour_used_pct}",
        f"resets_at={snapshot.five_hour_resets_at}",
        f"verdict={verdict}",
        f"login_at={login_at}",
    ]
    if is_word(snapshot.account):
        fields.append(f"account={snapshot.account}")
    if is_word(snapshot.tier):
        fields.append(f"tier={snapshot.tier}")
    if snapshot.weekly_present() and is_word(snapshot.seven_day_used_pct) and is_word(snapshot.seven_day_resets_at):
        fields.append(f"pct_7d={snapshot.seven_day_used_pct} resets_7d={snapshot.seven_day_resets_at}")
    if snapshot.tokens_present() and is_word(snapshot.tokens_in) and is_word(snapshot.tokens_out):
        fields.append(f"tokens_in={snapshot.tokens_in} tokens_out={snapshot.tokens_out}")
    return " ".join(fields)


def append(path: str, line: str) -> bool:
    """Append ``line`` and a newline to the log at ``path`` (:func:`st2.fs.log.append_line`).
    Fail-soft: the log is advisory, so a failure returns False and changes no verdict."""
    return append_line(path, line + "\n")


def fields_of(line: str) -> dict[str, str]:
    """Split a sample line into its ``key=value`` fields (first ``=``; a token without one is
    not a field, so comment lines yield nothing; the first occurrence of a key wins)."""
    fields: dict[str, str] = {}
    for token in line.split():
        key, separator, value = token.partition("=")
        if separator and key not in fields:
            fields[key] = value
    return fields


def previous_boundary(path: str, account: str) -> int | None:
    """The roll witness's previous boundary: the ``resets_at`` of the newest sample in the log
    at ``path`` for ``account`` (the newest sample of all when ``account`` is ""). Falls open to
    None whenever the log cannot answer: no path, file absent or unreadable, no sample for the
    account, or a newest sample whose resets_at is not a plain non-negative integer."""
    if not path:
        return None
    try:
        text = read_bounded(path, HISTORY_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in reversed(text.splitlines()):
        fields = fields_of(line)
        if "resets_at" not in fields and "updated_at" not in fields:
            continue
        if account and fields.get("account") != account:
            continue
        value = fields.get("resets_at", "")
        return int(value) if value.isdigit() and value.isascii() else None
    return None
