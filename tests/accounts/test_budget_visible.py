"""A budget hold is visible (unit tier, real temp catalogs): the roster's ``deliveryHold`` reads
``budget`` (a fresh dnd still wins) and the appended ``account`` and ``budgetHold`` name it,
Doctor's ``delivery-hold`` names the account, the window and when it resets, and the fleet-event
``hold`` facet starts and lifts with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roster_fixture import _seat
from st2.accounts import budget
from st2.declarations.catalog import load_catalog_declaration
from st2.doctor.records import record_findings
from st2.events import facets
from st2.records import status as status_record
from st2.roster.build import build_roster
from st2.roster.wire import to_json
from st2.runtime.launch_record import LaunchRecord
from st2.runtime.scope import RuntimeScope

NOW_S = 1_800_000_000
NOW_MS = NOW_S * 1000
UNTIL_MS = (NOW_S + 1800) * 1000   # 2027-01-15T08:30Z

ROW = ('{{"identity":"alpha.{seat}","status":"{status}","name":null,"description":null,"retired":false,"resources":[],'
       '"desiredState":"running","desiredStateReason":null,"observedState":null,'
       '"driverDiagnostic":{{"status":"absent","driver":null,"stage":null,"reason":null,"source":null,'
       '"producerVersion":null,"support":"unknown","observedAt":null,"evidenceAgeMs":null,'
       '"recovery":"publishFailureOrClearOnStageRecovery"}},"context":null,"id":"alpha.{seat}","address":"{seat}",'
       '"busAddress":"alpha.{seat}","worktree":null,"deliveryHold":{hold},"account":{account},"budgetHold":{budget}}}')
HELD = '{"reason":"budget","account":"main","axis":"5h","until":' + str(UNTIL_MS) + '}'


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """Seats ``on-main`` (launched on account main, hold-on-pause), ``on-spare`` (account spare,
    no hold-on-pause) and ``plain`` (no account), the budget records published; returns
    ``(catalog, main's usage file)``."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    root = tmp_path / "catalog"
    root.mkdir()
    (root / "catalog.kdl").write_text(f'''catalog {{
    account "main" {{
        DELEGATION_KIT_USAGE_FILE "{tmp_path}/main.txt"
        hold-on-pause #true
    }}
    account "spare" {{
        DELEGATION_KIT_USAGE_FILE "{tmp_path}/spare.txt"
    }}
}}
''')
    scope = RuntimeScope(root, "alpha")
    scope.ensure()
    for identity, account in (("on-main", "main"), ("on-spare", "spare"), ("plain", None)):
        line = f'\n    account "{account}"' if account else ""
        _seat(root, "alpha", identity, f'agent "{identity}" {{\n    argv "sh" "-c" "true"{line}\n}}\n')
        record = LaunchRecord(runtime_id=f"alpha.{identity}", kind="exec", pid=4242, start_time=1.0,
                              created_at="2027-01-15T08:00:00Z", generation_id="g", argv_digest="d",
                              launched_at_ms=NOW_MS, supervisor_pid=1, account=account)
        scope.tasks.mkdir(parents=True, exist_ok=True)
        (scope.tasks / f"alpha.{identity}.json").write_bytes(record.to_json())
    declaration, _ = load_catalog_declaration(root)
    assert budget.publish(scope.directory, declaration.accounts, root, {"HOME": str(tmp_path)}) == []
    for name in ("main", "spare"):
        (tmp_path / f"{name}.txt").write_text(f"five_hour_used_pct=91\nfive_hour_resets_at={NOW_S + 1800}\n"
                                              f"updated_at={NOW_S}\n")
    return root, tmp_path / "main.txt"


def rows(root: Path, now_ms: int = NOW_MS) -> list:
    found, problems = build_roster(root, now_ms, host="alpha")
    assert problems == []
    return found


def test_the_roster_shows_the_budget_hold_and_appends_account_and_budget_hold(fleet) -> None:
    root, usage = fleet
    assert to_json(rows(root), False) == "[" + ",".join((
        ROW.format(seat="on-main", status="offline", hold='"budget"', account='"main"', budget=HELD),
        ROW.format(seat="on-spare", status="offline", hold="null", account='"spare"', budget="null"),
        ROW.format(seat="plain", status="offline", hold="null", account="null", budget="null"))) + "]"
    # A fresh dnd still reads dnd; the budget hold stays named beside it.
    (root / "agents/alpha/on-main/status").write_bytes(status_record.encode(status_record.DND, NOW_MS))
    row = json.loads(to_json(rows(root), False))[0]
    assert (row["deliveryHold"], row["budgetHold"]["reason"]) == ("dnd", "budget")
    # The window reset: nothing holds.
    usage.write_text(f"five_hour_used_pct=2\nfive_hour_resets_at={NOW_S + 18000}\nupdated_at={NOW_S}\n")
    row = json.loads(to_json(rows(root), False))[0]
    assert (row["deliveryHold"], row["account"], row["budgetHold"]) == ("dnd", "main", None)


def test_doctor_names_the_account_the_window_and_when_it_resets(fleet) -> None:
    root, usage = fleet
    held, spare, plain = rows(root)
    [finding] = [item for item in record_findings(held, NOW_MS) if item.check == "delivery-hold"]
    assert finding.message == ("delivery held: budget of account main (5h window at 91%, hold-on-pause); new mail "
                               "waits unread and unowned until the window resets at 2027-01-15T08:30Z or the "
                               "verdict changes")
    assert [item for item in record_findings(spare, NOW_MS) + record_findings(plain, NOW_MS)
            if item.check == "delivery-hold"] == []


def test_a_hold_event_marks_the_start_and_the_lift_with_account_and_until(fleet) -> None:
    root, usage = fleet
    held, spare, plain = rows(root)
    assert facets.key("hold", "alpha.plain") not in facets.seat_facets(plain)   # no account: no hold facet
    name = facets.key("hold", "alpha.on-main")
    before = {name: None}
    [start] = facets.diff(before, facets.seat_facets(held), NOW_MS)
    assert start.line() == ('{"schema":"st2.fleet-event.v1","seq":null,"kind":"hold","seat":"alpha.on-main",'
                            '"from":null,"to":"budget","observedAtMs":' + str(NOW_MS) + ','
                            '"evidence":{"account":"main","axis":"5h","until":' + str(UNTIL_MS) + '}}')
    assert facets.diff({name: "budget"}, facets.seat_facets(held), NOW_MS) == []   # restated: no event
    after = rows(root, UNTIL_MS)[0]                                                 # the window reset
    [lift] = facets.diff({name: "budget"}, facets.seat_facets(after), UNTIL_MS)
    assert lift.line() == ('{"schema":"st2.fleet-event.v1","seq":null,"kind":"hold","seat":"alpha.on-main",'
                           '"from":"budget","to":null,"observedAtMs":' + str(UNTIL_MS) + ','
                           '"evidence":{"account":"main","axis":null,"until":null}}')


def test_st2_top_marks_the_held_row_and_its_detail_says_why(fleet, monkeypatch) -> None:
    import time

    from st2.top.actions import hold_lines
    from st2.top.model import SeatView

    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    root, usage = fleet
    held, spare, plain = rows(root)
    assert [SeatView(row).cells(NOW_MS)[2] for row in (held, spare, plain)] == [
        "offline held:budget", "offline", "offline"]
    assert hold_lines(held) == ["delivery held: budget (account main, 5h window, until 08:30)"]
    assert hold_lines(spare) == hold_lines(plain) == []
    monkeypatch.delenv("TZ")
    time.tzset()
