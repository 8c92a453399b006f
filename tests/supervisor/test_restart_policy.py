from __future__ import annotations

from st2.declarations.model import Restart
from st2.supervisor.restart_policy import Event, Phase, TaskState, transition

FAIL = Restart(attempts=2, interval_seconds=60.0, delay_seconds=0.0, mode="fail")
DELAY = Restart(attempts=2, interval_seconds=60.0, delay_seconds=5.0, mode="delay")


def exits(policy, moments, state=TaskState()):
    for moment in moments:
        state = transition(state, Event.LAUNCHED, policy, moment)
        state = transition(state, Event.EXITED, policy, moment + 0.1)
    return state


def test_fail_mode_parks_only_after_attempts_exits_within_the_interval():
    assert exits(FAIL, [0, 1]).phase is Phase.WAITING
    parked = exits(FAIL, [0, 1, 2])
    assert parked.phase is Phase.PARKED
    assert not parked.launchable(1000)
    assert transition(parked, Event.LAUNCHED, FAIL, 5).phase is Phase.PARKED


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


def test_adoption_is_a_named_event_that_happens_once():
    adopted = transition(TaskState(), Event.ADOPTED, FAIL, 0)
    assert adopted.phase is Phase.RUNNING
    assert transition(adopted, Event.ADOPTED, FAIL, 1) == adopted           # never adopted twice
    waiting = exits(FAIL, [0])
    assert transition(waiting, Event.ADOPTED, FAIL, 1).phase is Phase.RUNNING  # found alive while waiting
    parked = exits(FAIL, [0, 1, 2])
    assert transition(parked, Event.ADOPTED, FAIL, 5) == parked             # being seen alive unparks nothing


def test_a_refused_task_is_not_crash_counted_and_admission_releases_it():
    refused = transition(TaskState(), Event.REFUSED, FAIL, 0)
    assert (refused.phase, refused.exits, refused.launchable(100)) == (Phase.REFUSED, (), False)
    assert transition(refused, Event.EXITED, FAIL, 1) == refused
    assert transition(refused, Event.LAUNCHED, FAIL, 1) == refused
    admitted = transition(refused, Event.ADMITTED, FAIL, 2)
    assert admitted.phase is Phase.UNKNOWN and admitted.launchable(2)
    assert transition(TaskState(), Event.ADMITTED, FAIL, 2) == TaskState()  # admission alone starts nothing


def test_an_adopt_only_task_goes_down_without_counting_an_exit_and_is_adopted_again():
    running = transition(TaskState(), Event.ADOPTED, FAIL, 0)
    down = transition(running, Event.GONE, FAIL, 1)
    assert (down.phase, down.exits, down.not_before, down.launchable(100)) == (Phase.DOWN, (), None, False)
    for moment in (2, 3, 4):                    # however often it is seen down: never parked
        assert transition(down, Event.GONE, FAIL, moment) == down
        assert transition(down, Event.EXITED, FAIL, moment) == down
    assert transition(down, Event.LAUNCHED, FAIL, 5) == down
    assert transition(down, Event.ADOPTED, FAIL, 6).phase is Phase.RUNNING
    parked = exits(FAIL, [0, 1, 2])
    assert transition(parked, Event.GONE, FAIL, 3) == parked    # a park is not lifted by going down


def test_every_event_from_every_phase_has_a_defined_outcome():
    states = {Phase.UNKNOWN: TaskState(), Phase.RUNNING: transition(TaskState(), Event.LAUNCHED, FAIL, 0),
              Phase.WAITING: exits(FAIL, [0]), Phase.PARKED: exits(FAIL, [0, 1, 2]),
              Phase.REFUSED: transition(TaskState(), Event.REFUSED, FAIL, 0),
              Phase.DOWN: transition(TaskState(), Event.GONE, FAIL, 0)}
    assert set(states) == set(Phase) and all(state.phase is phase for phase, state in states.items())
    for state in states.values():
        for event in Event:
            assert isinstance(transition(state, event, FAIL, 10), TaskState)
