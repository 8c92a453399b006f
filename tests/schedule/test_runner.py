"""Scheduled prompts on a clock seam (FakeClock): posted on time, one catch-up after an outage,
never twice across a restart of the runner, and nothing early."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from st2.base.clock import FakeClock
from st2.bus.addressing import Seat
from st2.bus.mailbox import archive_of, list_box, list_inbox
from st2.declarations.model import Schedule
from st2.runtime.resumable_session import SessionStore
from st2.schedule import state
from st2.schedule.runner import Armed, ScheduleRunner
from st2.schedule.timing import last_slot_ms, next_run_ms

HOUR = 3_600_000
DAY = 24 * HOUR
# 2026-01-05T06:00:00Z, a Monday in winter (Berlin is UTC+1)
T0 = int(datetime.datetime(2026, 1, 5, 6, 0, tzinfo=datetime.timezone.utc).timestamp()) * 1000
DAILY = Schedule(name="daily", prompt="summarize the day", every_seconds=86400)
MORNING = Schedule(name="morning", prompt="plan the day", at=(9, 0), zone="Europe/Berlin")


def seat_in(catalog: Path, desired_state: str = "running") -> Seat:
    directory = catalog / "agents" / "h" / "builder"
    (directory / "resources" / "inbox").mkdir(parents=True, exist_ok=True)
    (directory / "resources" / "archive").mkdir(parents=True, exist_ok=True)
    return Seat("h", "builder", directory, desired_state=desired_state, streams=("schedule",))


def runner_over(catalog: Path, tmp_path: Path, clock: FakeClock, *schedules: Schedule,
                desired_state: str = "running") -> ScheduleRunner:
    runner = ScheduleRunner(catalog, SessionStore(tmp_path / "sessions" / "digest" / "h"), clock=clock)
    runner.update([Armed("h.builder", seat_in(catalog, desired_state), schedules)])
    return runner


def inbox(catalog: Path):
    return list_inbox(catalog / "agents" / "h" / "builder")


def test_a_prompt_is_posted_on_time_and_not_a_millisecond_early(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner = runner_over(catalog, tmp_path, clock, DAILY)
    assert runner.tick() == T0 + DAY  # armed at first sight: nothing posted
    assert inbox(catalog) == []
    clock.advance(24 * 3600 - 0.001)
    runner.tick()
    assert inbox(catalog) == []
    clock.advance(0.001)
    assert runner.tick() == T0 + 2 * DAY
    [message] = inbox(catalog)
    assert (message.sender, message.subject, message.tags, message.body) == (
        "stream:schedule", "daily (due 2026-01-06T06:00:00Z)", ("st2-stream", "stream:schedule"), "summarize the day\n")
    runner.tick()
    assert len(inbox(catalog)) == 1 and runner.posted == 1


def test_the_state_record_is_pinned(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner = runner_over(catalog, tmp_path, clock, DAILY, MORNING)
    runner.tick()
    clock.advance(3 * 3600)  # 09:00 Berlin
    runner.tick()
    store = SessionStore(tmp_path / "sessions" / "digest" / "h")
    path = state.path(store, "h.builder")
    assert path.read_text() == (
        '{"schema":"st2.schedule-state.v1","agent":"h.builder","schedules":['
        f'{{"name":"daily","cadence":"every 86400s","anchorMs":{T0},"lastSlotMs":null,"lastFiredMs":null,'
        f'"nextRunMs":{T0 + DAY}}},'
        f'{{"name":"morning","cadence":"at 09:00 Europe/Berlin","anchorMs":{T0},"lastSlotMs":{T0 + 2 * HOUR},'
        f'"lastFiredMs":{T0 + 3 * HOUR},"nextRunMs":{T0 + 2 * HOUR + DAY}}}]}}\n')
    assert oct(path.stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("schedule, slot", [(DAILY, T0 + 3 * DAY), (MORNING, T0 + 3 * DAY + 2 * HOUR)])
def test_a_three_day_outage_ends_in_exactly_one_catch_up(catalog: Path, tmp_path: Path, schedule, slot) -> None:
    clock = FakeClock(wall_ms=T0)
    runner_over(catalog, tmp_path, clock, schedule).tick()
    clock.advance(3 * 86400 + 5 * 3600)  # the supervisor was down (or the host off) for 3 days
    runner = runner_over(catalog, tmp_path, clock, schedule)
    runner.tick()
    runner.tick()
    [message] = inbox(catalog)
    assert message.subject == f"{schedule.name} (due {datetime.datetime.fromtimestamp(slot // 1000, datetime.timezone.utc):%Y-%m-%dT%H:%M:%SZ})"
    assert runner.posted == 1
    entry = state.read(SessionStore(tmp_path / "sessions" / "digest" / "h"), "h.builder")[schedule.name]
    assert entry.last_slot_ms == slot and entry.next_run_ms > clock.wall_ms()


def test_a_restarted_runner_never_posts_a_slot_twice(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner_over(catalog, tmp_path, clock, DAILY).tick()
    clock.advance(86400)
    first = runner_over(catalog, tmp_path, clock, DAILY)
    first.tick()
    assert first.posted == 1
    clock.advance(60)
    second = runner_over(catalog, tmp_path, clock, DAILY)  # a new supervisor, nothing in memory
    second.tick()
    assert second.posted == 0 and len(inbox(catalog)) == 1


def test_a_crash_between_the_post_and_the_state_write_replays_the_same_file(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner_over(catalog, tmp_path, clock, DAILY).tick()
    store = SessionStore(tmp_path / "sessions" / "digest" / "h")
    before = state.path(store, "h.builder").read_bytes()
    clock.advance(86400)
    runner_over(catalog, tmp_path, clock, DAILY).tick()
    state.path(store, "h.builder").write_bytes(before)  # the state write never happened
    clock.advance(30)
    replay = runner_over(catalog, tmp_path, clock, DAILY)
    replay.tick()
    assert replay.posted == 0 and len(inbox(catalog)) == 1
    assert state.read(store, "h.builder")["daily"].last_slot_ms == T0 + DAY


def test_an_unread_prompt_is_superseded_by_the_next_one(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner = runner_over(catalog, tmp_path, clock, DAILY)
    runner.tick()
    clock.advance(86400)
    runner.tick()
    clock.advance(86400)
    runner.tick()
    [message] = inbox(catalog)
    assert message.subject == "daily (due 2026-01-07T06:00:00Z)"
    assert len(list_box(archive_of(catalog / "agents" / "h" / "builder"))) == 1


def test_a_changed_cadence_re_arms_and_a_suspended_seat_gets_nothing(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    runner_over(catalog, tmp_path, clock, DAILY).tick()
    clock.advance(86400 * 2)
    runner_over(catalog, tmp_path, clock, DAILY, desired_state="suspended").tick()
    assert inbox(catalog) == []
    hourly = DAILY._replace(every_seconds=3600)
    runner = runner_over(catalog, tmp_path, clock, hourly)
    assert runner.tick() == clock.wall_ms() + HOUR  # re-armed from the change: no catch-up
    assert inbox(catalog) == []


def test_a_malformed_state_record_re_arms_without_posting(catalog: Path, tmp_path: Path) -> None:
    clock = FakeClock(wall_ms=T0)
    store = SessionStore(tmp_path / "sessions" / "digest" / "h")
    store.ensure()
    state.path(store, "h.builder").parent.mkdir(parents=True)
    state.path(store, "h.builder").write_text('{"schema":"st2.schedule-state.v1","agent":"h.other","schedules":[]}')
    runner = runner_over(catalog, tmp_path, clock, DAILY)
    assert runner.tick() == T0 + DAY and inbox(catalog) == []
    assert json.loads(state.path(store, "h.builder").read_text())["agent"] == "h.builder"


def test_at_slots_follow_the_zone_across_daylight_saving() -> None:
    march = int(datetime.datetime(2026, 3, 28, 12, 0, tzinfo=datetime.timezone.utc).timestamp()) * 1000
    utc = lambda ms: datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    assert utc(next_run_ms(MORNING, march, march)) == "2026-03-29T07:00Z"  # 09:00 CEST, the day the clocks go forward
    assert utc(last_slot_ms(MORNING, march - DAY, march)) == "2026-03-28T08:00Z"  # 09:00 CET
    gap = MORNING._replace(at=(2, 30))  # skipped on 2026-03-29 in Berlin: moves forward by the gap
    assert utc(next_run_ms(gap, march, march)) == "2026-03-29T01:30Z"
    assert last_slot_ms(DAILY, T0, T0 + DAY - 1) is None
