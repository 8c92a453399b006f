"""The budget reason of the one delivery-hold predicate (st2.accounts.budget, st2.delivery.hold):
only a fresh, readable PAUSE of an account that says ``hold-on-pause`` holds, until the paused
window resets; every other reading holds nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

from st2.accounts import budget
from st2.delivery import budget as delivery_budget
from st2.delivery.budget import BudgetHold, budget_hold
from st2.declarations.catalog import parse_catalog_declaration
from st2.delivery.hold import delivery_hold
from st2.records import status as status_record
from st2.runtime import layout
from st2.runtime.launch_record import LaunchRecord

NOW_S = 1_800_000_000
NOW_MS = NOW_S * 1000
SEAT = "h.alpha"


def snapshot(path: Path, used: str, resets_at: int, updated_at: int = NOW_S, extra: str = "") -> None:
    path.write_text(f"five_hour_used_pct={used}\nfive_hour_resets_at={resets_at}\nupdated_at={updated_at}\n{extra}")


def scope_with(tmp_path: Path, hold_on_pause: bool = True, account: str | None = "main",
               stale_age: int = 600) -> tuple[Path, Path]:
    """A runtime scope whose seat ``h.alpha`` was launched on ``account``, and the account's
    budget record (pause at 80 %); returns ``(scope, usage file)``."""
    scope = tmp_path / "scope"
    usage = tmp_path / "usage.txt"
    (scope / layout.TASKS).mkdir(parents=True)
    record = LaunchRecord(runtime_id=SEAT, kind="exec", pid=4242, start_time=1.0, created_at="2027-01-15T08:00:00Z",
                          generation_id="g1", argv_digest="d", launched_at_ms=NOW_MS - 60_000, supervisor_pid=1,
                          account=account)
    (scope / layout.TASKS / f"{SEAT}.json").write_bytes(record.to_json())
    Path(layout.account_budget(str(scope), "main")).parent.mkdir(parents=True, exist_ok=True)
    Path(layout.account_budget(str(scope), "main")).write_bytes(
        delivery_budget.record_bytes("main", hold_on_pause, str(usage), "80", "95", stale_age))
    return scope, usage


def test_a_fresh_pause_holds_until_the_window_resets(tmp_path) -> None:
    scope, usage = scope_with(tmp_path)
    snapshot(usage, "91", NOW_S + 1800)
    hold = budget_hold(scope, SEAT, NOW_MS)
    assert hold == BudgetHold("main", "5h", (NOW_S + 1800) * 1000, "91")
    assert hold.to_wire() == {"reason": "budget", "account": "main", "axis": "5h", "until": (NOW_S + 1800) * 1000}
    assert json.dumps(hold.to_wire(), separators=(",", ":")) == \
        f'{{"reason":"budget","account":"main","axis":"5h","until":{(NOW_S + 1800) * 1000}}}'
    assert delivery_hold(tmp_path / "status", NOW_MS, scope, SEAT) == "budget"
    # Past resets_at the window has reset: the same snapshot holds nothing.
    assert budget_hold(scope, SEAT, (NOW_S + 1801) * 1000) is None


def test_the_weekly_axis_holds_until_its_own_reset(tmp_path) -> None:
    scope, usage = scope_with(tmp_path)
    snapshot(usage, "10", NOW_S + 1800, extra=f"seven_day_used_pct=97\nseven_day_resets_at={NOW_S + 86400}\n")
    assert budget_hold(scope, SEAT, NOW_MS) == BudgetHold("main", "7d", (NOW_S + 86400) * 1000, "97")


def test_a_stale_reading_holds_nothing(tmp_path) -> None:
    scope, usage = scope_with(tmp_path, stale_age=600)
    snapshot(usage, "99", NOW_S + 1800, updated_at=NOW_S - 601)
    assert budget_hold(scope, SEAT, NOW_MS) is None
    assert delivery_hold(tmp_path / "status", NOW_MS, scope, SEAT) is None
    snapshot(usage, "99", NOW_S + 1800, updated_at=NOW_S - 599)   # the firing side of the same rule
    assert budget_hold(scope, SEAT, NOW_MS) is not None


def test_a_reading_under_the_threshold_holds_nothing(tmp_path) -> None:
    scope, usage = scope_with(tmp_path)
    snapshot(usage, "79", NOW_S + 1800)
    assert budget_hold(scope, SEAT, NOW_MS) is None
    snapshot(usage, "80", NOW_S + 1800)
    assert budget_hold(scope, SEAT, NOW_MS) is not None


def test_an_account_without_hold_on_pause_holds_nothing(tmp_path) -> None:
    scope, usage = scope_with(tmp_path, hold_on_pause=False)
    snapshot(usage, "99", NOW_S + 1800)
    assert budget_hold(scope, SEAT, NOW_MS) is None
    assert delivery_hold(tmp_path / "status", NOW_MS, scope, SEAT) is None


def test_a_malformed_or_missing_record_or_snapshot_holds_nothing(tmp_path) -> None:
    scope, usage = scope_with(tmp_path)
    snapshot(usage, "99", NOW_S + 1800)
    path = Path(layout.account_budget(str(scope), "main"))
    good = path.read_bytes()
    for bad in (b"{", b"[]", good.replace(b'"holdOnPause":true', b'"holdOnPause":"yes"'),
                good.replace(b'"account":"main"', b'"account":"other"'),
                good.replace(b"st2.account-budget.v1", b"st2.account-budget.v0")):
        path.write_bytes(bad)
        assert budget_hold(scope, SEAT, NOW_MS) is None, bad
    path.unlink()
    assert budget_hold(scope, SEAT, NOW_MS) is None
    path.write_bytes(good)
    assert budget_hold(scope, SEAT, NOW_MS) is not None
    usage.write_text("five_hour_used_pct=99\n")          # not a snapshot: no measurement
    assert budget_hold(scope, SEAT, NOW_MS) is None
    usage.unlink()
    assert budget_hold(scope, SEAT, NOW_MS) is None


def test_a_seat_on_no_account_holds_nothing(tmp_path) -> None:
    scope, usage = scope_with(tmp_path, account=None)
    snapshot(usage, "99", NOW_S + 1800)
    assert budget_hold(scope, SEAT, NOW_MS) is None
    assert budget_hold(scope, "h.never-launched", NOW_MS) is None
    assert budget_hold(scope, SEAT, NOW_MS, account="main") is not None   # the caller names it
    # Without a scope and runtime id the predicate asks only the seed's dnd.
    assert delivery_hold(tmp_path / "status", NOW_MS) is None


def test_dnd_wins_over_the_budget(tmp_path) -> None:
    scope, usage = scope_with(tmp_path)
    snapshot(usage, "99", NOW_S + 1800)
    status = tmp_path / "status"
    status.write_bytes(status_record.encode(status_record.DND, NOW_MS))
    assert delivery_hold(status, NOW_MS, scope, SEAT) == "dnd"
    status.write_bytes(status_record.encode(status_record.BUSY, NOW_MS))   # busy never holds; the budget does
    assert delivery_hold(status, NOW_MS, scope, SEAT) == "budget"


def test_publish_writes_each_declared_account_and_removes_an_undeclared_one(tmp_path) -> None:
    declaration, found = parse_catalog_declaration(f'''catalog {{
    account "main" {{
        DELEGATION_KIT_USAGE_FILE "{tmp_path}/main.txt"
        hold-on-pause #true
    }}
    account "spare" {{
        DELEGATION_KIT_USAGE_FILE "{tmp_path}/spare.txt"
        DELEGATION_KIT_PAUSE_PCT "70"
    }}
}}
''')
    assert found == []
    scope = tmp_path / "scope"
    scope.mkdir()
    environ = {"HOME": str(tmp_path)}
    assert budget.publish(scope, declaration.accounts, tmp_path, environ) == []
    main = json.loads(Path(layout.account_budget(str(scope), "main")).read_text())
    spare = json.loads(Path(layout.account_budget(str(scope), "spare")).read_text())
    assert (main["holdOnPause"], main["usageFile"], spare["holdOnPause"], spare["pausePct"]) == \
        (True, f"{tmp_path}/main.txt", False, "70")
    assert budget.publish(scope, {"main": declaration.accounts["main"]}, tmp_path, environ) == []
    assert sorted(p.name for p in Path(layout.account_budget(str(scope), "x")).parent.iterdir()) == ["main.json"]
    # A FIFO or a symlink in the record's place is never waited on or followed: it is replaced.
    record = Path(layout.account_budget(str(scope), "main"))
    record.unlink()
    os.mkfifo(record)
    assert budget.publish(scope, {"main": declaration.accounts["main"]}, tmp_path, environ) == []
    assert json.loads(record.read_text())["account"] == "main"
    target = tmp_path / "elsewhere.json"
    target.write_text("keep")
    record.unlink()
    record.symlink_to(target)
    assert budget.publish(scope, {"main": declaration.accounts["main"]}, tmp_path, environ) == []
    assert not record.is_symlink() and target.read_text() == "keep"
