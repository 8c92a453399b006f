"""The task lifecycle machine the supervisor keeps per task, and its one transition function.

``restart { attempts N; interval I; delay D; mode "delay"|"fail" }``: after an exit, the task is
relaunched ``D`` seconds later as long as at most ``N`` exits fall within the last ``I``
seconds. Past that, mode ``delay`` waits until the oldest exit leaves the window; mode ``fail``
parks the task. Times are monotonic seconds from the :class:`~st2.clock.Clock`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace

from st2.declarations.model import Restart


class Phase(enum.Enum):
    UNKNOWN = "unknown"     # not yet launched or adopted by this supervisor
    RUNNING = "running"     # launched or adopted, last seen alive
    WAITING = "waiting"     # exited; may relaunch at ``not_before``
    PARKED = "parked"       # fail-mode budget exhausted; only ``st2 unpark`` recovers it


class Event(enum.Enum):
    STARTED = "started"           # launched or adopted
    EXITED = "exited"             # seen gone (or failed to launch)
    UNPARKED = "unparked"         # an explicit unpark request
    STOPPED = "stopped"           # desired absent; torn down


@dataclass(frozen=True)
class TaskState:
    phase: Phase = Phase.UNKNOWN
    exits: tuple[float, ...] = field(default_factory=tuple)
    not_before: float | None = None

    def launchable(self, now: float) -> bool:
        if self.phase is Phase.UNKNOWN:
            return True
        return self.phase is Phase.WAITING and (self.not_before is None or now >= self.not_before)


def transition(state: TaskState, event: Event, policy: Restart, now: float) -> TaskState:
    """The only place a task's lifecycle changes."""
    if event is Event.STARTED:
        # UNKNOWN -> RUNNING, WAITING -> RUNNING (a relaunch); a parked task never starts
        if state.phase is Phase.PARKED:
            return state
        return replace(state, phase=Phase.RUNNING, not_before=None)
    if event is Event.EXITED:
        if state.phase is Phase.PARKED:
            return state
        exits = tuple(moment for moment in state.exits if now - moment < policy.interval_seconds) + (now,)
        if len(exits) > policy.attempts:
            if policy.mode == "fail":
                # RUNNING|WAITING -> PARKED: the budget is spent
                return TaskState(Phase.PARKED, exits, None)
            # RUNNING|WAITING -> WAITING until the oldest exit leaves the window
            return TaskState(Phase.WAITING, exits, max(exits[0] + policy.interval_seconds, now + policy.delay_seconds))
        # RUNNING|WAITING -> WAITING for the restart delay
        return TaskState(Phase.WAITING, exits, now + policy.delay_seconds)
    if event is Event.UNPARKED:
        # PARKED -> UNKNOWN with the spent budget cleared
        return TaskState()
    if event is Event.STOPPED:
        # any -> UNKNOWN, keeping the exit history (a stop is not a crash, and not a reset either)
        return TaskState(Phase.UNKNOWN, state.exits, None)
    raise ValueError(event)
