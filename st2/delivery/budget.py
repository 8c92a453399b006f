"""An account's budget as its seats' deliverers judge it: the budget record and the hold it makes.

The supervisor publishes each declared account's record (:func:`st2.accounts.budget.publish`),
``<scope>/accounts/<account>.json`` (``st2.account-budget.v1``)::

    {"schema":"st2.account-budget.v1","account":"main","holdOnPause":true,
     "usageFile":"/home/u/.claude-main/usage.txt","pausePct":"80","pausePct7d":"95","staleAge":600}

:func:`budget_hold` is the budget reason of the one delivery-hold predicate
(:mod:`st2.delivery.hold`): the seat's running account is its launch record's ``account``; that
account's record says whether it holds at all; its snapshot is judged by the verdict's own
:func:`st2.records.usage_snapshot.judge`, never refreshed. Only a fresh, readable PAUSE holds, until
the paused window's ``resets_at``; STALE, RESET-OK, an unreadable or missing snapshot, a missing
or malformed record, and a seat with no account hold nothing (a reading that is not a
measurement never stops mail). Standard library only: the DING notifiers and the native wrappers
import this.
"""

from __future__ import annotations

import json
import os

from st2.runtime import layout

ACCOUNT_VARIABLE = "ST2_ACCOUNT"   # the declared account a seat's tasks run on (set at launch)
SCHEMA = "st2.account-budget.v1"
REASON = "budget"
RECORD_LIMIT = 64 * 1024


class BudgetHold:
    """A held account: ``axis`` ``"5h"`` or ``"7d"``, ``until_ms`` the paused window's reset."""

    __slots__ = ("account", "axis", "until_ms", "used_pct")

    def __init__(self, account: str, axis: str, until_ms: int, used_pct: str) -> None:
        self.account = account
        self.axis = axis
        self.until_ms = until_ms
        self.used_pct = used_pct

    def to_wire(self) -> dict:
        return {"reason": REASON, "account": self.account, "axis": self.axis, "until": self.until_ms}

    def __eq__(self, other) -> bool:
        return isinstance(other, BudgetHold) and self.to_wire() == other.to_wire()

    def __repr__(self) -> str:
        return f"BudgetHold({self.account!r}, {self.axis!r}, {self.until_ms})"


def record_bytes(account: str, hold_on_pause: bool, usage_file: str, pause: str, pause_7d: str,
                 stale_age: int) -> bytes:
    body = {"schema": SCHEMA, "account": account, "holdOnPause": hold_on_pause, "usageFile": usage_file,
            "pausePct": pause, "pausePct7d": pause_7d, "staleAge": stale_age}
    return json.dumps(body, separators=(",", ":")).encode() + b"\n"


def read_record(scope, account: str) -> dict | None:
    """The account's budget record, or None when absent, unreadable or malformed."""
    from st2.fs.read import read_bounded

    try:
        data = read_bounded(layout.account_budget(str(scope), account), RECORD_LIMIT, follow_symlinks=False)
        body = json.loads(data)
    except (OSError, ValueError):
        return None
    if not isinstance(body, dict) or body.get("schema") != SCHEMA or body.get("account") != account:
        return None
    if not (isinstance(body.get("holdOnPause"), bool) and isinstance(body.get("usageFile"), str)
            and isinstance(body.get("pausePct"), str) and isinstance(body.get("pausePct7d"), str)
            and isinstance(body.get("staleAge"), int) and not isinstance(body.get("staleAge"), bool)):
        return None
    return body


def running_account(scope, runtime_id: str) -> str | None:
    """The account the seat's live generation was launched on (its launch record's ``account``)."""
    from st2.runtime.launch_record import MalformedRecord, read_path

    try:
        record = read_path(os.path.join(str(scope), layout.TASKS), runtime_id)
    except MalformedRecord:
        return None
    return record.account if record is not None else None


def judge_record(record: dict, now_s: int) -> BudgetHold | None:
    """The hold a budget record's snapshot makes at ``now_s``: a fresh, readable PAUSE holds
    until its window resets; anything else holds nothing."""
    from st2.records import usage_snapshot
    from st2.records.usage_snapshot import JUDGED_PAUSE_5H, JUDGED_PAUSE_7D, judge

    reading = usage_snapshot.read_file(record["usageFile"])
    parsed = reading.snapshot
    if reading.outcome != usage_snapshot.READ or parsed is None or usage_snapshot.future_skewed(parsed, now_s):
        return None
    judged = judge(parsed, now_s, record["pausePct"], record["pausePct7d"], record["staleAge"])
    if judged == JUDGED_PAUSE_5H:
        return BudgetHold(record["account"], "5h", int(parsed.five_hour_resets_at) * 1000, parsed.five_hour_used_pct)
    if judged == JUDGED_PAUSE_7D:
        return BudgetHold(record["account"], "7d", int(parsed.seven_day_resets_at) * 1000, parsed.seven_day_used_pct)
    return None


def budget_hold(scope, runtime_id: str, now_ms: int, account: str | None = None) -> BudgetHold | None:
    """The budget hold on ``runtime_id``'s delivery at ``now_ms``: its running account (or
    ``account`` when the caller knows it) says ``hold-on-pause`` and its snapshot is a fresh PAUSE."""
    account = account if account is not None else running_account(scope, runtime_id)
    if account is None:
        return None
    record = read_record(scope, account)
    if record is None or not record["holdOnPause"]:
        return None
    return judge_record(record, now_ms // 1000)
