"""The header's usage reading: both windows from the snapshot (:mod:`st2.kit.usage.snapshot`), judged
by the verdict rule (:func:`st2.kit.usage.verdict.verdict`) with ``refreshing=False`` and
``sampling=False`` — a view never spawns the refresh command and never appends a sample — and
the sparkline's recent 5-hour percentages from the usage history (``DELEGATION_KIT_USAGE_HISTORY``,
its ``key=value`` lines read by :func:`st2.kit.usage.history.fields_of`)."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

from st2.fs.read import HISTORY_LIMIT, read_bounded
from st2.kit.usage import history, knobs as knob_table, snapshot as usage_snapshot
from st2.kit.usage.verdict import verdict, verdict_word

SPARK_HOURS = 6
HISTORY_KNOB = "DELEGATION_KIT_USAGE_HISTORY"
SAMPLING_OFF = (f"sampling off: set {HISTORY_KNOB}=<file> (env or knob file) so `st2 usage verdict` "
                "records history for the sparkline")


@dataclass
class UsageView:
    verdict_line: str
    verdict_word: str
    five_hour_pct: float | None = None
    seven_day_pct: float | None = None
    sampling: bool = False
    spark: list[float] = field(default_factory=list)
    watched: list[str] = field(default_factory=list)  # the files whose change re-reads the header


def _percent(text: str) -> float | None:
    return float(text) if text and usage_snapshot.is_percentage(text) else None


def read_usage(environ=None, now: int | None = None) -> UsageView:
    """Judge and read the usage snapshot as the header shows it. Never raises for bad input: a
    malformed knob configuration or snapshot reads as the verdict's own STALE line."""
    environ = os.environ if environ is None else environ
    line, _ = verdict([], environ, now, io.StringIO(), refreshing=False, sampling=False)
    view = UsageView(line, verdict_word(line))
    try:
        config = knob_table.resolve(environ)
    except knob_table.KnobError:
        return view
    usage_file = knob_table.usage_paths(config, environ).usage_file
    view.watched.append(usage_file)
    reading = usage_snapshot.read_file(usage_file)
    if reading.snapshot is not None and reading.outcome == usage_snapshot.READ:
        view.five_hour_pct = _percent(reading.snapshot.five_hour_used_pct)
        if reading.snapshot.weekly_armed():
            view.seven_day_pct = _percent(reading.snapshot.seven_day_used_pct)
    history_path = config.scalar(HISTORY_KNOB)
    view.sampling = bool(history_path)
    if history_path:
        view.watched.append(history_path)
        view.spark = recent_percentages(history_path, now)
    return view


def recent_percentages(path: str, now: int | None, hours: int = SPARK_HOURS) -> list[float]:
    """The 5-hour ``pct`` of every sample updated within the last ``hours`` (all when ``now`` is
    None), oldest first; unparseable lines are skipped."""
    try:
        text = read_bounded(path, HISTORY_LIMIT).decode("utf-8", errors="replace")
    except OSError:
        return []
    values = []
    for line in text.splitlines():
        fields = history.fields_of(line)
        updated, pct = fields.get("updated_at", ""), fields.get("pct", "")
        if not (updated.isdigit() and usage_snapshot.is_percentage(pct)):
            continue
        if now is not None and int(updated) < now - hours * 3600:
            continue
        values.append(float(pct))
    return values
