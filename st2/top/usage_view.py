"""The header's usage reading: both windows from the snapshot (:mod:`st2.records.usage_snapshot`), judged
by the verdict rule (:func:`st2.kit.usage.verdict.verdict`) with ``refreshing=False`` and
``sampling=False`` — a view never spawns the refresh command and never appends a sample — and
the sparkline's recent 5-hour percentages from the usage history (``DELEGATION_KIT_USAGE_HISTORY``,
its ``key=value`` lines read by :func:`st2.kit.usage.history.fields_of`)."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass, field

from st2.fs.read import HISTORY_LIMIT, read_bounded
from st2.kit.usage import history, knobs as knob_table
from st2.records import usage_snapshot
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
    accounts: list[AccountUsage] = field(default_factory=list)  # one per declared account, by name


@dataclass
class AccountUsage:
    """A declared account's line of the header: its snapshot's windows judged with its own knobs
    (:func:`st2.accounts.scope.account_environ`)."""

    name: str
    verdict_word: str
    five_hour_pct: float | None = None
    seven_day_pct: float | None = None


def _percent(text: str) -> float | None:
    return float(text) if text and usage_snapshot.is_percentage(text) else None


def read_usage(environ=None, now: int | None = None, catalog_root=None) -> UsageView:
    """Judge and read the usage snapshot as the header shows it, and with ``catalog_root`` each
    account its ``catalog.kdl`` declares (:attr:`UsageView.accounts`). Never raises for bad
    input: a malformed knob configuration or snapshot reads as the verdict's own STALE line."""
    environ = os.environ if environ is None else environ
    line, _ = verdict([], environ, now, io.StringIO(), refreshing=False, sampling=False)
    view = UsageView(line, verdict_word(line))
    if catalog_root is not None:
        view.accounts = read_accounts(catalog_root, environ, now, view.watched)
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


def read_accounts(catalog_root, environ, now: int | None, watched: list[str]) -> list[AccountUsage]:
    """Each declared account's windows and verdict word (none declared: empty, and the catalog
    parser is not imported when there is no ``catalog.kdl``); its snapshot joins ``watched``."""
    if not os.path.isfile(os.path.join(str(catalog_root), "catalog.kdl")):
        return []
    from st2.accounts.scope import account_environ, declared_accounts

    usages = []
    for name, account in sorted(declared_accounts(catalog_root).items()):
        scoped = account_environ(account, catalog_root, environ)
        line, _ = verdict([], scoped, now, io.StringIO(), refreshing=False, sampling=False)
        usage = AccountUsage(name, verdict_word(line))
        usages.append(usage)
        try:
            config = knob_table.resolve(scoped)
        except knob_table.KnobError:
            continue
        usage_file = knob_table.usage_paths(config, scoped).usage_file
        if usage_file not in watched:
            watched.append(usage_file)
        reading = usage_snapshot.read_file(usage_file)
        if reading.snapshot is not None and reading.outcome == usage_snapshot.READ:
            usage.five_hour_pct = _percent(reading.snapshot.five_hour_used_pct)
            if reading.snapshot.weekly_armed():
                usage.seven_day_pct = _percent(reading.snapshot.seven_day_used_pct)
    return usages


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
