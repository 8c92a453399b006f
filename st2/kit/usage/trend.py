"""`st2 usage trend [--] [history-file]`: how the usage footprint evolves, read from the sample
history `st2 usage verdict` appends (``DELEGATION_KIT_USAGE_HISTORY``).

Advisory, never a gate: exit 0 when a report is printed (a history with no parseable sample is
still a report, of zero segments), 2 when the knob is unset, the history missing or unreadable,
the knob configuration malformed or the argv misshapen — never 1; the verdict stays the only
pause authority.

The source is known-noisy (a rolling-window reading spikes and reverts when the next push
corrects a harness over-report), so the reporter leans on the window's one physical constraint:
within a segment, true usage never decreases.

1. Each sample yields a 5h record, and a 7d record when both weekly keys ride. Records are
   segmented per axis by that axis's reset epoch, ``login_at``, ``account`` and ``tier``: a
   reset, a /login, an account or a tier change each starts a segment. Absent optional keys read
   as their defaults (account/tier/verdict/tokens ``-``, login_at ``0``), never as errors.
2. A sample below an earlier one in its segment is a monotonicity violation: it and every
   earlier sample above it are suspect and excluded from the rate, never averaged in.
   Median-of-3 smoothing resolves single-sample spikes; segment endpoints keep their own value.
3. Per segment: first and last smoothed pct, the pct-per-hour rate between the first and last
   trusted samples, token deltas when both endpoints carry tokens, tier, sample count, suspect
   count; the weekly axis adds its headroom to ``DELEGATION_KIT_PAUSE_PCT_7D`` (printed back
   verbatim) at the current rate. Segments group under an ``account`` heading.
4. With two or more distinct accounts, a combine block: per account its newest weekly segment's
   last smoothed pct and headroom (``-`` for both without one), then
   ``accounts: <n>, at or over the weekly ceiling: <k>``. It sums nothing (tiers differ).

The segment order is a contract: records sort by account, axis and tier bytewise, then login_at,
the axis reset and updated_at numerically (no numeric prefix reads as zero), then by the whole
record bytewise — never by input order, which on a full-key tie would pick different endpoints.
The segmenter compares the key tuple as text, so two spellings of one epoch stay two segments.

Segment lines, and only they, begin with two spaces and ``[5h]`` or ``[7d]``.
"""

from __future__ import annotations

import os
import re
import sys

from st2.front import Shape, ShapeRefusal, parse
from st2.fs.read import HISTORY_LIMIT, read_bounded
from st2.kit.usage import knobs as knob_table
from st2.kit.usage.history import fields_of

HISTORY_KNOB = "DELEGATION_KIT_USAGE_HISTORY"
CEILING_KNOB = "DELEGATION_KIT_PAUSE_PCT_7D"
ABSENT = "-"
ABSENT_LOGIN = "0"
USAGE = (
    "usage: st2 usage trend [--] [history-file]\n"
    "  [history-file] overrides DELEGATION_KIT_USAGE_HISTORY.\n"
    '  "--" ends option processing, so a path beginning with "-" is still reachable.'
)
_NUMERIC_PREFIX = re.compile(r"^\s*[-+]?[0-9]*\.?[0-9]+")


class TrendRefusal(Exception):
    """The arm cannot report: its message goes to stderr and the exit status is 2."""


def number(text: str) -> float:
    """The leading numeric prefix of ``text`` as a float, 0 when there is none (sort -n's read)."""
    match = _NUMERIC_PREFIX.match(text)
    if match is None:
        return 0.0
    try:
        return float(match.group(0))
    except ValueError:
        return 0.0


class Record:
    """One axis reading of one sample, every field as the producer spelled it."""

    __slots__ = ("axis", "account", "tier", "login", "reset", "updated", "pct", "verdict", "tokens_in", "tokens_out", "line")

    def __init__(self, axis: str, fields: dict[str, str], pct: str, reset: str) -> None:
        self.axis = axis
        self.account = fields.get("account") or ABSENT
        self.tier = fields.get("tier") or ABSENT
        self.login = fields.get("login_at") or ABSENT_LOGIN
        self.reset = reset
        self.updated = fields["updated_at"]
        self.pct = number(pct)
        self.verdict = fields.get("verdict") or ABSENT
        self.tokens_in = fields.get("tokens_in") or ABSENT
        self.tokens_out = fields.get("tokens_out") or ABSENT
        self.line = "\t".join(
            (axis, self.account, self.tier, self.login, reset, self.updated, pct, self.verdict, self.tokens_in, self.tokens_out)
        )

    def sort_key(self) -> tuple:
        return (
            self.account.encode(),
            self.axis.encode(),
            self.tier.encode(),
            number(self.login),
            number(self.reset),
            number(self.updated),
            self.line.encode(),
        )

    def segment_key(self) -> tuple[str, ...]:
        return (self.axis, self.account, self.tier, self.login, self.reset)


def parse_records(text: str) -> list[Record]:
    """Axis records of every sample line (a line without updated_at, e.g. a comment, yields none)."""
    records = []
    for line in text.splitlines():
        fields = fields_of(line)
        if "updated_at" not in fields:
            continue
        if "pct" in fields and "resets_at" in fields:
            records.append(Record("5h", fields, fields["pct"], fields["resets_at"]))
        if "pct_7d" in fields and "resets_7d" in fields:
            records.append(Record("7d", fields, fields["pct_7d"], fields["resets_7d"]))
    return records


def segments(records: list[Record]) -> list[list[Record]]:
    """Sort by the contract order and split where the key tuple (as text) changes."""
    ordered = sorted(records, key=Record.sort_key)
    groups: list[list[Record]] = []
    for record in ordered:
        if groups and groups[-1][0].segment_key() == record.segment_key():
            groups[-1].append(record)
        else:
            groups.append([record])
    return groups


def smoothed(rows: list[Record]) -> list[float]:
    """Median-of-3 over interior samples; the endpoints keep their own value."""
    values = [row.pct for row in rows]
    return [
        value if index in (0, len(values) - 1) else sorted(values[index - 1 : index + 2])[1]
        for index, value in enumerate(values)
    ]


def suspects(rows: list[Record]) -> list[bool]:
    """Monotonicity violations: a sample below the running maximum, and every earlier sample
    above it (the correction indicts the elevated readings before it)."""
    flags = [False] * len(rows)
    running_max = rows[0].pct if rows else 0.0
    for index in range(1, len(rows)):
        value = rows[index].pct
        if value < running_max:
            flags[index] = True
            for earlier in range(index):
                if rows[earlier].pct > value:
                    flags[earlier] = True
        running_max = max(running_max, value)
    return flags


class Segment:
    """The numbers one segment reports."""

    def __init__(self, rows: list[Record]) -> None:
        self.rows = rows
        smooth = smoothed(rows)
        self.suspect = suspects(rows)
        self.first = smooth[0]
        self.last = smooth[-1]
        self.hours = (number(rows[-1].updated) - number(rows[0].updated)) / 3600.0
        trusted = [index for index, flag in enumerate(self.suspect) if not flag]
        self.rate: float | None = None
        if len(trusted) >= 2:
            span = (number(rows[trusted[-1]].updated) - number(rows[trusted[0]].updated)) / 3600.0
            if span > 0:
                self.rate = (smooth[trusted[-1]] - smooth[trusted[0]]) / span

    @property
    def newest_update(self) -> float:
        return number(self.rows[-1].updated)


def render_segment(segment: Segment, ceiling: str) -> list[str]:
    head = segment.rows[0]
    rate = f"{segment.rate:+.2f}%/h" if segment.rate is not None else "rate n/a (fewer than two trusted readings)"
    lines = [
        f"  [{head.axis}] reset@{head.reset} login@{head.login} tier={head.tier}:"
        f" {segment.first:.1f}%->{segment.last:.1f}% over {segment.hours:.2f}h, {rate},"
        f" {len(segment.rows)} sample(s), {sum(segment.suspect)} suspect"
    ]
    first, last = segment.rows[0], segment.rows[-1]
    if ABSENT not in (first.tokens_in, first.tokens_out, last.tokens_in, last.tokens_out):
        lines.append(
            f"      tokens: {int(number(last.tokens_in) - number(first.tokens_in)):+d} in"
            f" / {int(number(last.tokens_out) - number(first.tokens_out)):+d} out over the segment"
        )
    if head.axis == "7d":
        headroom = number(ceiling) - segment.last
        if segment.rate is not None and segment.rate > 0:
            outlook = f"~{headroom / segment.rate:.1f}h at current rate"
        else:
            outlook = "no depletion trend at current rate"
        lines.append(f"      weekly headroom: {headroom:.1f}% to the {ceiling}% ceiling ({outlook})")
    pause = next((row for row in segment.rows if row.verdict == "PAUSE"), None)
    if pause is not None:
        lines.append(f"      first PAUSE onset at epoch {pause.updated}")
    return lines


def report(text: str, ceiling: str, source: str) -> str:
    """The whole report over history ``text`` (``source`` names it in the zero-segment line)."""
    records = parse_records(text)
    if not records:
        return f"usage-trend: no parseable samples in {source} (0 segments)\n"
    groups = [Segment(rows) for rows in segments(records)]
    lines = [f"usage-trend: {len(records)} axis-record(s) in {len(groups)} segment(s)"]
    current_account = None
    for segment in groups:
        account = segment.rows[0].account
        if account != current_account:
            lines.append("")
            lines.append("account: (unstamped)" if account == ABSENT else f"account {account}")
            current_account = account
        lines.extend(render_segment(segment, ceiling))
    accounts = sorted({segment.rows[0].account for segment in groups} - {ABSENT}, key=str.encode)
    if len(accounts) >= 2:
        lines.append("")
        lines.append("weekly position per account (advisory; accounts are never summed):")
        at_or_over = 0
        for account in accounts:
            weekly = [s for s in groups if s.rows[0].account == account and s.rows[0].axis == "7d"]
            if not weekly:
                lines.append(f"  account {account}: last -, headroom -")
                continue
            newest = max(weekly, key=lambda s: s.newest_update)
            if newest.last >= number(ceiling):
                at_or_over += 1
            lines.append(
                f"  account {account}: last {newest.last:.1f}%,"
                f" headroom {number(ceiling) - newest.last:.1f}% to the {ceiling}% ceiling"
            )
        lines.append(f"accounts: {len(accounts)}, at or over the weekly ceiling: {at_or_over}")
    return "\n".join(lines) + "\n"


# Any positionals (the first is the history file), ``--`` as the first word making every later
# word a positional; a dash-led word before it is refused.
WORDS = Shape(positionals=None, escape="first")


def parse_arguments(args: list[str]) -> str | None:
    """The history-file positional, or None. A dash-led word other than a first ``--`` is refused
    (``-h``/``--help`` included: the usage is the refusal's); later positionals are ignored."""
    try:
        positionals = parse(list(args), WORDS).positionals
    except ShapeRefusal as refusal:
        raise TrendRefusal(f"usage-trend: {refusal}\n{USAGE}") from None
    return positionals[0] if positionals else None


def trend(args: list[str], environ=None) -> str:
    """Return the report text, or raise :class:`TrendRefusal`."""
    environ = os.environ if environ is None else environ
    path = parse_arguments(args)
    try:
        config = knob_table.resolve(environ)
    except knob_table.KnobError as error:
        raise TrendRefusal("\n".join(f"usage-trend: {finding}" for finding in error.findings)) from None
    if not path:
        path = config.scalar(HISTORY_KNOB)
    if not path:
        raise TrendRefusal(f"usage-trend: {HISTORY_KNOB} unset — no history to report (enable sampling first)")
    try:
        text = read_bounded(path, HISTORY_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        raise TrendRefusal(f"usage-trend: cannot read history {path}") from None
    return report(text, config.scalar(CEILING_KNOB), path)


def main(argv: list[str], environ=None) -> int:
    """`st2 usage trend …`: 0 report printed, 2 refused (never 1). ``environ`` as for
    :func:`st2.kit.usage.verdict.main`."""
    try:
        text = trend(argv, environ)
    except TrendRefusal as refusal:
        sys.stderr.write(f"{refusal}\n")
        return 2
    sys.stdout.write(text)
    return 0
