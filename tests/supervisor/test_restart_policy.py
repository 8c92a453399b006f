from __future__ import annotations

from st2.declarations.model import Restart
from st2.supervisor.restart_policy import Event, Phase, TaskState, transition

FAIL = Restart(attempts=2, interval_seconds=60.0, delay_seconds=0.0, mode="fail")
DELAY = Restart(attempts=2, interval_seconds=60.0, delay_seconds=5.0, mode="delay")


def exits(policy, moments, state=TaskState()):
    for moment in moments:
        state = transition(state, Event.STARTED, policy, moment)
        state = transition(state, Event.EXITED, policy, moment + 0.1)
    return state


def test_fail_mode_parks_only_after_attempts_exits_within_the_interval():
    assert exits(FAIL, [0, 1]).phase is Phase.WAITING
    parked = exits(FAIL, [0, 1, 2])
    assert parked.phase is Phase.PARKED
    assert not parked.launchable(1000)
    assert transition(parked, Event.STARTED, FAIL, 5).phase is Phase.PARKED


def test_exits_spread_beyond_the_interval_never_park():
    assert exits(FAIL, [0, 61, 122, 183]).phase is Phase.WAITING


def test_delay_mode_waits_the_delay_and_then_for_the_window_instead_of_parking():
    state = exits(DELAY, [0])
    assert state.phase is Phase.WAITING and state.not_before == 5.1
    assert not state.launchable(5.0) and state.launchable(5.1)
    exhausted = exits(DELAY, [0, 6, 12])
    assert exhausted.phase is Phase.WAITING
    assert exhausted.not_before == 60.1                 # the oldest exit leaves the window


def test_unpark_clears_exactly_the_spent_budget():
    parked = exits(FAIL, [0, 1, 2])
    recovered = transition(parked, Event.UNPARKED, FAIL, 3)
    assert recovered == TaskState()
    assert recovered.launchable(3)
    assert exits(FAIL, [3, 4], recovered).phase is Phase.WAITING
