"""Doctor and ``st2 top``'s detail pane name each schedule's next run, read from the state the
schedule thread keeps."""

from __future__ import annotations

from pathlib import Path

from st2.base.clock import FakeClock
from st2.catalog.location import CatalogLocation
from st2.doctor.run import run_doctor
from st2.doctor.schedules import schedule_findings
from st2.roster.build import build_roster
from st2.runtime.resumable_session import SessionStore
from st2.schedule.runner import ScheduleRunner, armed_from_plans
from st2.supervisor.catalog_view import read_catalog
from st2.top.actions import detail_lines
from st2.top.model import SeatView

T0 = 1_767_592_800_000  # 2026-01-05T06:00:00Z
DECLARATION = ('agent "builder" {\n    argv "sh"\n'
               '    schedule "daily" { every "24h"; prompt "summarize the day" }\n'
               '    schedule "morning" { at "09:00" "Europe/Berlin"; prompt "plan the day" }\n}\n')


def catalog_with_schedules(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    catalog = tmp_path / "catalog"
    seat = catalog / "agents" / "h" / "builder"
    (seat / "resources" / "inbox").mkdir(parents=True)
    (seat / "resources" / "archive").mkdir(parents=True)
    (seat / "agent.kdl").write_text(DECLARATION)
    return catalog


def test_doctor_names_each_schedule_before_and_after_it_is_armed(tmp_path: Path, monkeypatch) -> None:
    catalog = catalog_with_schedules(tmp_path, monkeypatch)
    assert [finding.line() for finding in schedule_findings(catalog, "h", T0)] == [
        "advisory: h.builder: schedule: daily (every 86400s): not armed yet; st2 up arms it on its next pass",
        "advisory: h.builder: schedule: morning (at 09:00 Europe/Berlin): not armed yet; st2 up arms it on its next pass",
    ]
    clock = FakeClock(wall_ms=T0)
    runner = ScheduleRunner(catalog, SessionStore.of(catalog, "h"), clock=clock)
    runner.update(armed_from_plans(read_catalog(CatalogLocation(catalog, "h")).plans))
    runner.tick()
    clock.advance(3 * 3600)
    runner.tick()
    assert runner.posted == 1
    expected = [
        "advisory: h.builder: schedule: daily (every 86400s): next run 2026-01-06T06:00:00Z, never posted",
        "advisory: h.builder: schedule: morning (at 09:00 Europe/Berlin): next run 2026-01-06T08:00:00Z, "
        "last posted 2026-01-05T08:00:00Z",
    ]
    assert [finding.line() for finding in schedule_findings(catalog, "h", T0)] == expected
    assert [finding.line() for finding in run_doctor(catalog, "h", T0) if finding.check == "schedule"] == expected
    assert schedule_findings(catalog, "other-host", T0) == []

    rows, _ = build_roster(catalog, T0, enrich=True)
    lines = detail_lines(CatalogLocation(catalog, "h"), SeatView(rows[0]), T0)
    start = lines.index("schedules:")
    assert lines[start:start + 3] == [
        "schedules:",
        "  daily (every 86400s): next run 2026-01-06T06:00:00Z, never posted",
        "  morning (at 09:00 Europe/Berlin): next run 2026-01-06T08:00:00Z, last posted 2026-01-05T08:00:00Z",
    ]
