"""The schedule thread of ``st2 up``: posts each due scheduled prompt into its seat's inbox.

After every pass the supervisor hands over this host's seat plans (:meth:`ScheduleRunner.update`);
the thread then works :meth:`ScheduleRunner.tick` at the earliest next run (at least once a
minute, so a wall-clock jump is seen), outside the pass. One tick, per schedule of a seat whose
desired state is running:

- first seen, or its cadence changed: armed from now (``anchorMs``), nothing posted;
- now at or past ``nextRunMs``: the latest slot at or before now is posted — once, however many
  slots an outage covered — then ``nextRunMs`` becomes the first slot after now.

The post is one stream event through :func:`st2.bus.stream.emit` on the built-in stream
``schedule``: event id ``<name>@<slot ms>``, key ``<name>``, superseding the schedule's previous
unread prompt. The state record is written after the post, so a crash between the two replays the
same slot, which the stream's receipt ring turns into the same file (never a second post); a
supervisor restarted after the write finds ``nextRunMs`` in the future. A refused post (a hostile
ring, a full disk) is said once and retried a minute later; the state does not advance.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable

from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.bus import BusError
from st2.bus.addressing import Seat
from st2.declarations.model import RUNNING, Schedule
from st2.runtime.resumable_session import SessionStore
from st2.schedule import state
from st2.schedule.timing import iso, last_slot_ms, next_run_ms

SCHEDULE_STREAM = "schedule"
RECHECK_MS = 60_000


class Armed:
    """One seat's schedules as the last pass lowered them."""

    __slots__ = ("runtime_id", "seat", "schedules")

    def __init__(self, runtime_id: str, seat: Seat, schedules: tuple[Schedule, ...]) -> None:
        self.runtime_id = runtime_id
        self.seat = seat
        self.schedules = schedules


def armed_from_plans(plans) -> list[Armed]:
    """This host's seats with schedules, from the supervisor's seat plans (each has ``host``,
    ``identity``, ``agent``, ``desired_state``, ``declaration_path`` and ``declaration``)."""
    found = []
    for plan in plans:
        declaration = plan.declaration
        if declaration is None or not declaration.schedules:
            continue
        seat = Seat(plan.host, plan.identity, Path(plan.declaration_path).parent,
                    desired_state=plan.desired_state, streams=(SCHEDULE_STREAM,))
        found.append(Armed(plan.agent, seat, declaration.schedules))
    return found


class ScheduleRunner:
    def __init__(self, catalog: Path, store: SessionStore, *, clock: Clock = SYSTEM_CLOCK,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.catalog = Path(catalog)
        self.store = store
        self.clock = clock
        self.say = say
        self.posted = 0
        self._armed: list[Armed] = []
        self._retry: dict[tuple[str, str], int] = {}
        self._said: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def update(self, armed: list[Armed]) -> None:
        """Replace the set of armed seats (after a pass) and wake the thread."""
        with self._lock:
            self._armed = list(armed)
        self._wake.set()

    def tick(self) -> int | None:
        """Post every due prompt once; return the earliest next run (ms) or None."""
        with self._lock:
            armed = list(self._armed)
        now = self.clock.wall_ms()
        earliest = None
        for seat in armed:
            if seat.seat.desired_state != RUNNING:
                continue
            soonest = self._seat(seat, now)
            if soonest is not None:
                earliest = soonest if earliest is None else min(earliest, soonest)
        return earliest

    def _seat(self, armed: Armed, now: int) -> int | None:
        recorded = state.read(self.store, armed.runtime_id) or {}
        entries: list[state.Entry] = []
        changed = False
        soonest = None
        for schedule in armed.schedules:
            entry = recorded.get(schedule.name)
            if entry is None or entry.cadence != schedule.cadence:
                entry = state.Entry(schedule.name, schedule.cadence, now, None, None, next_run_ms(schedule, now, now))
                changed = True
            elif now >= entry.next_run_ms and now >= self._retry.get((armed.runtime_id, schedule.name), 0):
                posted = self._post(armed, schedule, entry, now)
                if posted is not None:
                    entry, changed = posted, True
            entries.append(entry)
            due = max(entry.next_run_ms, self._retry.get((armed.runtime_id, schedule.name), 0))
            soonest = due if soonest is None else min(soonest, due)
        if changed or set(recorded) != {entry.name for entry in entries}:
            try:
                state.write(self.store, armed.runtime_id, entries)
            except OSError as error:
                self._say_once(f"schedules of {armed.runtime_id}: cannot write their state: {error}")
        return soonest

    def _post(self, armed: Armed, schedule: Schedule, entry: state.Entry, now: int) -> state.Entry | None:
        from st2.bus.stream import emit

        slot = last_slot_ms(schedule, entry.anchor_ms, now)
        if slot is None:  # the next run was recorded under another anchor: re-derive it
            return entry._replace(next_run_ms=next_run_ms(schedule, entry.anchor_ms, now))
        try:
            result = emit(self.catalog, armed.seat, stream=SCHEDULE_STREAM, event_id=f"{schedule.name}@{slot}",
                          key=schedule.name, supersede=True, body=schedule.prompt,
                          subject=f"{schedule.name} (due {iso(slot)})", clock=self.clock)
        except (BusError, OSError) as error:
            self._retry[(armed.runtime_id, schedule.name)] = now + RECHECK_MS
            self._say_once(f"schedule {schedule.name} of {armed.runtime_id}: not posted, retrying in a minute: {error}")
            return None
        self._retry.pop((armed.runtime_id, schedule.name), None)
        if not result.deduplicated:
            self.posted += 1
            self.say(f"schedule {schedule.name} of {armed.runtime_id}: posted the {iso(slot)} prompt as {result.filename}")
        return entry._replace(last_slot_ms=slot, last_fired_ms=now, next_run_ms=next_run_ms(schedule, entry.anchor_ms, now))

    def _say_once(self, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.say(line)

    # --- the thread ---------------------------------------------------------------------------

    def start(self) -> "ScheduleRunner":
        self._thread = threading.Thread(target=self._run, name="st2-schedules", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped.is_set():
            self._wake.clear()
            try:
                earliest = self.tick()
            except Exception as error:  # the thread must outlive one bad tick; the pass goes on
                self._say_once(f"schedules: tick failed: {error!r}")
                earliest = None
            wait_ms = RECHECK_MS if earliest is None else min(RECHECK_MS, max(0, earliest - self.clock.wall_ms()))
            self._wake.wait(wait_ms / 1000 + 0.001)
