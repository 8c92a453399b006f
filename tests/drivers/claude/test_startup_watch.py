"""The Claude wrapper's startup pane watch (st2/drivers/claude/startup_watch.py) over a real seat
directory, a FakeClock and the captured 2.1.197 screens (captures/claude-code/2.1.197/screens):
the trust dialog is published as blocked on a human under the session's claim, a composer is not,
and the watch ends at the first hook's observation or its deadline."""

from __future__ import annotations

from pathlib import Path

from support import make_seat
from support_claude import REPO

from st2.base.clock import FakeClock
from st2.drivers.claude import startup_watch
from st2.drivers.claude.startup_watch import INTERVAL_SECONDS, REASON, WATCH_SECONDS, StartupWatch, own_pane
from st2.drivers.lifecycle import SessionRecords
from st2.drivers.screen import Screen
from st2.records import harness_state

SCREENS = REPO / "captures" / "claude-code" / "2.1.197" / "screens"


def lines(name: str) -> list[str]:
    x, y, width = (int(field) for field in (SCREENS / f"{name}.cursor").read_text().split())
    return Screen.parse((SCREENS / f"{name}.ansi").read_text(), x, y, width).lines


class Pane:
    """The pane the watch captures: a captured screen by name, and how many times it was read."""

    def __init__(self, name: str | None) -> None:
        self.name = name
        self.reads = 0

    def __call__(self) -> list[str] | None:
        self.reads += 1
        return None if self.name is None else lines(self.name)


def claimed(tmp_path: Path) -> tuple[SessionRecords, FakeClock]:
    clock = FakeClock()
    seat = make_seat(tmp_path / "catalog")
    records = SessionRecords(seat.directory, seat.agent, "claude", seat.agent, clock)
    records.claim()
    return records, clock


def state(records: SessionRecords) -> harness_state.Record:
    return harness_state.decode((Path(records.seat_directory) / harness_state.RECORD_NAME).read_bytes())


def test_the_trust_dialog_is_published_blocked_on_a_human_under_the_claim(tmp_path: Path) -> None:
    records, clock = claimed(tmp_path)
    watch = StartupWatch(records, clock, Pane("trust"))
    clock.advance(INTERVAL_SECONDS)
    assert watch.step() is True
    record = state(records)
    assert (record.state, record.blocked_on, record.ask, record.reason, record.incarnation, record.seq) == (
        "active", "human", "permission", REASON, records.token, records.seq)
    observed = harness_state.read((Path(records.seat_directory) / harness_state.RECORD_NAME).read_bytes(),
                                  clock.wall_ms())
    assert observed.blocked_on_human


def test_a_composer_or_a_permission_prompt_is_not_the_trust_dialog(tmp_path: Path) -> None:
    for name in ("empty", "permission"):
        records, clock = claimed(tmp_path / name)
        claim = state(records)
        watch = StartupWatch(records, clock, Pane(name))
        clock.advance(INTERVAL_SECONDS)
        assert watch.step() is True   # still unobserved: the watch goes on
        assert state(records) == claim


def test_the_watch_looks_once_a_second_and_not_again_after_publishing(tmp_path: Path) -> None:
    records, clock = claimed(tmp_path)
    pane = Pane("trust")
    watch = StartupWatch(records, clock, pane)
    assert watch.step() is True and pane.reads == 0   # not due yet
    clock.advance(INTERVAL_SECONDS)
    watch.step()
    published = state(records)
    for _ in range(5):
        clock.advance(INTERVAL_SECONDS)
        assert watch.step() is True
    assert pane.reads == 1 and state(records) == published


def test_the_first_hook_observation_ends_the_watch_and_is_never_overwritten(tmp_path: Path) -> None:
    records, clock = claimed(tmp_path)
    hook = harness_state.Writer(records.seat_directory, records.agent, "claude", clock, pty_session=records.runtime_id,
                                incarnation=records.token)
    assert hook.observe("idle", reason="sessionStart")
    pane = Pane("trust")
    watch = StartupWatch(records, clock, pane)
    clock.advance(INTERVAL_SECONDS)
    assert watch.step() is False and pane.reads == 0
    assert (state(records).state, state(records).reason) == ("idle", "sessionStart")
    # Even a look that raced the hook's write cannot replace it: the watch writes only over the claim.
    assert records.writer.observe("active", blocked_on="human", ask="permission", reason=REASON,
                                  over_claim=True) is False
    assert state(records).reason == "sessionStart"


def test_after_publishing_the_hook_supersedes_and_the_watch_ends(tmp_path: Path) -> None:
    records, clock = claimed(tmp_path)
    watch = StartupWatch(records, clock, Pane("trust"))
    clock.advance(INTERVAL_SECONDS)
    watch.step()
    hook = harness_state.Writer(records.seat_directory, records.agent, "claude", clock, pty_session=records.runtime_id,
                                incarnation=records.token)
    assert hook.observe("idle", reason="sessionStart")
    clock.advance(INTERVAL_SECONDS)
    assert watch.step() is False
    assert state(records).blocked_on == "none"


def test_the_watch_ends_at_its_deadline_or_when_the_pane_cannot_be_read(tmp_path: Path) -> None:
    records, clock = claimed(tmp_path / "deadline")
    pane = Pane("empty")
    watch = StartupWatch(records, clock, pane)
    clock.advance(WATCH_SECONDS)
    assert watch.step() is False and pane.reads == 0
    records, clock = claimed(tmp_path / "unreadable")
    watch = StartupWatch(records, clock, Pane(None))
    clock.advance(INTERVAL_SECONDS)
    assert watch.step() is False


def test_only_a_pane_of_the_seats_own_tmux_server_is_watched() -> None:
    own = {"TMUX": "/run/st2/scope/s/host.worker,4242,0", "TMUX_PANE": "%0"}
    assert own_pane(own, "host.worker") == ("/run/st2/scope/s/host.worker", "%0")
    assert own_pane(own, "host.other") is None                                   # someone's own tmux
    assert own_pane({"TMUX": own["TMUX"]}, "host.worker") is None                 # no pane
    assert own_pane({}, "host.worker") is None                                    # not in tmux
    assert startup_watch.WATCH_SECONDS <= 120 and startup_watch.INTERVAL_SECONDS >= 1
