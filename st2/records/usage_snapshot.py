"""The usage.txt contract: the snapshot any producer writes and `st2 usage verdict` reads.

Three mandatory ``key=value`` lines::

    five_hour_used_pct=<float>
    five_hour_resets_at=<epoch-seconds>
    updated_at=<epoch-seconds>

and optional keys a producer writes only when its source has a value: ``seven_day_used_pct``
and ``seven_day_resets_at`` (the weekly window; both or neither arm the weekly axis),
``account``, ``tier``, ``tokens_in``, ``tokens_out``. Omit-don't-empty binds both sides: a
writer never writes an optional key empty, and a reader tests presence, treats an empty value as
absent and never refuses a snapshot for lacking an optional key. Keys the reader does not
interpret pass through in :attr:`Snapshot.extra`.

A line splits on its first ``=``. A final line without its terminating newline is not a key: a
snapshot written by a non-atomic third-party producer can be observed torn, and a torn
``five_hour_used_pct=4`` (of ``42``) must read as missing, never as a smaller number.

The reader is a pure function of the bytes (:func:`read`); freshness is judged from
``updated_at`` inside the record, never from the file's mtime, by :func:`judge` — the verdict's
rule over a parsed snapshot, here below every reader of it (`st2 usage verdict`, the foreign
run's keyed verdict, an account's delivery hold). The writer
(:func:`write`) rewrites the whole file atomically.

Standard library only: the verdict hot path imports this (the writer's imports load lazily).
"""

from __future__ import annotations

import os

from st2.fs.read import SNAPSHOT_LIMIT, read_bounded

FIVE_HOUR_USED_PCT = "five_hour_used_pct"
FIVE_HOUR_RESETS_AT = "five_hour_resets_at"
UPDATED_AT = "updated_at"
SEVEN_DAY_USED_PCT = "seven_day_used_pct"
SEVEN_DAY_RESETS_AT = "seven_day_resets_at"
ACCOUNT = "account"
TIER = "tier"
TOKENS_IN = "tokens_in"
TOKENS_OUT = "tokens_out"

MANDATORY_KEYS = (FIVE_HOUR_USED_PCT, FIVE_HOUR_RESETS_AT, UPDATED_AT)
OPTIONAL_KEYS = (SEVEN_DAY_USED_PCT, SEVEN_DAY_RESETS_AT, ACCOUNT, TIER, TOKENS_IN, TOKENS_OUT)
KEYS = MANDATORY_KEYS + OPTIONAL_KEYS

# A percentage is ASCII digits with an optional fraction (never signed, never "12." or ".5"); an
# epoch is an optionally signed integer. Kept as the kit's own shapes so every reader agrees.
# String methods rather than regular expressions: this module is on the verdict's hot path.


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def is_percentage(text: str) -> bool:
    whole, dot, fraction = text.partition(".")
    return _digits(whole) and (not dot or _digits(fraction))


def is_epoch(text: str) -> bool:
    return _digits(text[1:] if text.startswith("-") else text)


class Snapshot:
    """A parsed snapshot: every interpreted key as its verbatim text ("" when absent), plus the
    uninterpreted ``extra`` pairs in file order."""

    __slots__ = KEYS + ("extra", "duplicates")

    def __init__(self, **values: str) -> None:
        unknown = set(values) - set(KEYS)
        if unknown:
            raise TypeError(f"not usage.txt keys: {sorted(unknown)}")
        for key in KEYS:
            setattr(self, key, values.get(key) or "")
        self.extra: list[tuple[str, str]] = []
        self.duplicates: list[str] = []  # interpreted keys written more than once, in file order

    def weekly_present(self) -> bool:
        """Both weekly keys ride (the sample line and the trend read the weekly axis only then)."""
        return bool(self.seven_day_used_pct and self.seven_day_resets_at)

    def weekly_armed(self) -> bool:
        """The weekly axis is armed: both weekly keys present and well-formed."""
        return (
            self.weekly_present()
            and is_percentage(self.seven_day_used_pct)
            and is_epoch(self.seven_day_resets_at)
        )

    def tokens_present(self) -> bool:
        return bool(self.tokens_in and self.tokens_out)

    def render(self) -> bytes:
        """The file bytes: the mandatory triple first, then each optional key that has a value.
        Raise ``ValueError`` if a mandatory key is empty or a value cannot be one line."""
        lines = []
        for key in KEYS:
            value = getattr(self, key)
            if not value:
                if key in MANDATORY_KEYS:
                    raise ValueError(f"{key} is mandatory")
                continue
            if "\n" in value or "\r" in value:
                raise ValueError(f"{key} value spans lines")
            lines.append(f"{key}={value}\n")
        return "".join(lines).encode("utf-8")


# Reading outcomes. Only READ is a parsed snapshot; the other three are the fail-closed readings
# the verdict words as STALE and never samples.
READ = "read"
UNREADABLE = "unreadable"
MISSING_KEYS = "missing-keys"
NON_NUMERIC = "non-numeric"
DUPLICATE_KEY = "duplicate-key"  # an interpreted key written twice: which one is the reading?

# An ``updated_at`` this far past the reader's clock is not a reading of now (a producer writing
# milliseconds, a skewed clock): it would read fresh for ever, so it reads STALE instead. The
# same bound as the JSON records' future skew.
FUTURE_SKEW_SECONDS = 60


def future_skewed(snapshot: "Snapshot", now: int) -> bool:
    """``updated_at`` is more than :data:`FUTURE_SKEW_SECONDS` ahead of ``now``."""
    return int(snapshot.updated_at) > now + FUTURE_SKEW_SECONDS


class Reading:
    __slots__ = ("outcome", "snapshot", "detail")

    def __init__(self, outcome: str, snapshot: Snapshot | None, detail: str = "") -> None:
        self.outcome = outcome
        self.snapshot = snapshot
        self.detail = detail


def parse(text: str) -> Snapshot:
    """Split ``text`` into a :class:`Snapshot` (never raises; absent keys read as "")."""
    snapshot = Snapshot()
    lines = text.split("\n")
    lines.pop()  # the unterminated remainder (empty when the file ends with a newline)
    seen: set[str] = set()
    for line in lines:
        key, separator, value = line.partition("=")
        if key in KEYS:
            if key in seen and key not in snapshot.duplicates:
                snapshot.duplicates.append(key)
            seen.add(key)
            setattr(snapshot, key, value)
        elif separator:
            snapshot.extra.append((key, value))
    return snapshot


def read(data: bytes | None) -> Reading:
    """Project snapshot bytes (None = missing or unreadable file) into a :class:`Reading`."""
    if data is None:
        return Reading(UNREADABLE, None)
    snapshot = parse(data.decode("utf-8", errors="replace"))
    if snapshot.duplicates:
        return Reading(DUPLICATE_KEY, snapshot, snapshot.duplicates[0])
    if not (snapshot.five_hour_used_pct and snapshot.five_hour_resets_at and snapshot.updated_at):
        return Reading(MISSING_KEYS, snapshot)
    if not is_percentage(snapshot.five_hour_used_pct):
        return Reading(NON_NUMERIC, snapshot, FIVE_HOUR_USED_PCT)
    for key in (FIVE_HOUR_RESETS_AT, UPDATED_AT):
        if not is_epoch(getattr(snapshot, key)):
            return Reading(NON_NUMERIC, snapshot, key)
    return Reading(READ, snapshot)


def read_file(path: str) -> Reading:
    """:func:`read` over the file at ``path``."""
    try:
        data = read_bounded(path, SNAPSHOT_LIMIT)
    except OSError:
        return read(None)
    return read(data)


def write(path: str, snapshot: Snapshot) -> None:
    """Rewrite the snapshot at ``path`` atomically (temp file in the same directory, fsync,
    rename, fsync the directory), owner-only since it names the account. A reader sees the old
    snapshot or the new one. Raise ``OSError`` (the old file stays as it was) or ``ValueError``."""
    from st2.fs.atomic import publish

    data = snapshot.render()
    directory = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    target = os.path.join(directory, os.path.basename(path))
    publish(target, data, directory, root=directory, mode=0o600)


def _number_text(value) -> str:
    """A JSON number as contract text: ints as digits, floats as Python spells them (23.5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return ""
    text = str(value)
    return text if is_percentage(text) or is_epoch(text) else ""


def from_rate_limits(rate_limits, now: int, account: str = "", tier: str = "") -> Snapshot | None:
    """The push producer's mapping: a Claude Code status-line payload's ``rate_limits`` object
    (``five_hour`` / ``seven_day``, each ``used_percentage`` and epoch ``resets_at``; shape in
    the docs' status-line schema) onto the contract, stamped ``updated_at=now``. None when the
    five-hour window is not readable (nothing is written then); the weekly pair only when both
    of its values are."""
    if not isinstance(rate_limits, dict):
        return None

    def window(name: str) -> tuple[str, str]:
        entry = rate_limits.get(name)
        if not isinstance(entry, dict):
            return "", ""
        used = _number_text(entry.get("used_percentage"))
        resets = _number_text(entry.get("resets_at"))
        return (used if is_percentage(used) else ""), (resets if is_epoch(resets) else "")

    five_used, five_resets = window("five_hour")
    if not (five_used and five_resets):
        return None
    seven_used, seven_resets = window("seven_day")
    if not (seven_used and seven_resets):
        seven_used = seven_resets = ""
    return Snapshot(
        five_hour_used_pct=five_used,
        five_hour_resets_at=five_resets,
        updated_at=str(now),
        seven_day_used_pct=seven_used,
        seven_day_resets_at=seven_resets,
        account=account if is_word(account) else "",
        tier=tier if is_word(tier) else "",
    )


def json_field(path: str, keys: tuple[str, ...]) -> str:
    """One string field of a JSON file by object path; "" when the file is missing, unreadable,
    not JSON, or carries no string there. Never raises."""
    import json

    try:
        document = json.loads(read_bounded(path, SNAPSHOT_LIMIT))
    except (OSError, ValueError, RecursionError):  # nesting past the recursion limit is malformed too
        return ""
    for key in keys:
        if not isinstance(document, dict) or key not in document:
            return ""
        document = document[key]
    return document if isinstance(document, str) else ""


def is_word(text: str) -> bool:
    """A value fit for a space-separated sample field: non-empty, no whitespace, no ``=``."""
    return bool(text) and "=" not in text and not any(character.isspace() for character in text)


# judge() outcomes over a parsed snapshot.
JUDGED_RESET_OK = "reset-ok"
JUDGED_AGE_STALE = "age-stale"
JUDGED_PAUSE_5H = "pause-5h"
JUDGED_PAUSE_7D = "pause-7d"
JUDGED_CLEAR = "clear"


def at_or_over(percentage: str, threshold: str) -> bool:
    """Float compare, at-or-over: a fractional reading cannot slip under an integer threshold,
    and a reading exactly at the threshold pauses."""
    try:
        return float(percentage) >= float(threshold)
    except ValueError:
        return False


ACCOUNT_KEYED = "account-keyed"
KEYED = "keyed"
JUDGED_PAUSE_LONG_DEAD_SHORT = "pause-long-dead-short"


def judge(reading: "Snapshot", now: int, pause: str, pause_7d: str, stale_age: int, order: str = ACCOUNT_KEYED) -> str:
    """The checks over a parsed snapshot, one function taking the order as a parameter.

    * ``ACCOUNT_KEYED`` (usage verdict): RESET-OK, age-STALE, then the two pause axes (weekly
      named when both fire). ``JUDGED_CLEAR`` is an OK the post-login reroute may suppress.
    * ``KEYED`` (the foreign run's keyed verdict, docs/kit.md §Keyed verdict): long-axis pause,
      RESET-OK, short-axis pause, age-STALE, clear. An at-or-over reading of a live window
      pauses at any age; the long axis is read before RESET-OK because a dead short window
      says nothing of a live long one (``JUDGED_PAUSE_LONG_DEAD_SHORT`` names that case).

    The weekly pair is the long axis, the 5h triple the short one; a passed long reset disarms
    the long axis in both orders."""
    weekly = (
        reading.weekly_armed()
        and int(reading.seven_day_resets_at) > now
        and at_or_over(reading.seven_day_used_pct, pause_7d)
    )
    short_dead = int(reading.five_hour_resets_at) <= now
    if order == KEYED:
        if weekly:
            return JUDGED_PAUSE_LONG_DEAD_SHORT if short_dead else JUDGED_PAUSE_7D
        if short_dead:
            return JUDGED_RESET_OK
        if at_or_over(reading.five_hour_used_pct, pause):
            return JUDGED_PAUSE_5H
        if now - int(reading.updated_at) > stale_age:
            return JUDGED_AGE_STALE
        return JUDGED_CLEAR
    if short_dead:
        return JUDGED_RESET_OK
    if now - int(reading.updated_at) > stale_age:
        return JUDGED_AGE_STALE
    if weekly:
        return JUDGED_PAUSE_7D
    if at_or_over(reading.five_hour_used_pct, pause):
        return JUDGED_PAUSE_5H
    return JUDGED_CLEAR
