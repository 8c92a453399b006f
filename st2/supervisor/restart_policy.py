"""The task lifecycle machine the supervisor keeps per task, and its one transition function.

``restart { attempts N; interval I; delay D; mode "delay"|"fail" }``: after an exit, the task is
relaunched ``D`` seconds later as long as at most ``N`` exits fall within the last ``I``
seconds. Past that, mode ``delay`` waits until the oldest exit leaves the window; mode ``fail``
parks the task. A task admission refuses (it could never start as declared, e.g. an unbindable
session socket path) is REFUSED, not crash-counted, until admission passes again. Adoption of a
live generation this supervisor did not start is its own event, distinct from a launch. A task
whose lifecycle is ``adopt-only`` is never launched by st2: seen without a live generation it is
DOWN (no exit counted, never parked) until a generation appears and is adopted. Times are
monotonic seconds from the :class:`~st2.base.clock.Clock`.
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
    REFUSED = "refused"     # can never start as declared (admission); relaunched once it can
    DOWN = "down"           # adopt-only with no live generation: never launched, adopted if one appears


class Event(enum.Enum):
    LAUNCHED = "launched"         # this supervisor started a generation
    ADOPTED = "adopted"           # a live generation this supervisor did not start was found
    EXITED = "exited"             # seen gone (or failed to launch)
    UNPARKED = "unparked"         # an explicit unpark request
    STOPPED = "stopped"           # desired absent; torn down
    REFUSED = "refused"           # admission refused the task: it could never start as declared
    ADMITTED = "admitted"         # admission passes again for a refused task
    GONE = "gone"                 # an adopt-only task was seen with no live generation


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
    """The only place a task's lifecycle changes. Every edge is named below; an event with no
    edge from the current phase leaves the state unchanged."""
    phase = state.phase
    if event is Event.LAUNCHED:
        # UNKNOWN -> RUNNING (first launch), WAITING -> RUNNING (a relaunch)
        if phase in (Phase.UNKNOWN, Phase.WAITING):
            return replace(state, phase=Phase.RUNNING, not_before=None)
        return state
    if event is Event.ADOPTED:
        # UNKNOWN -> RUNNING: a survivor of an earlier supervisor (or one that came up while we
        # waited, WAITING -> RUNNING, or while an adopt-only task was down, DOWN -> RUNNING) is
        # adopted, never relaunched. A parked or refused task is not revived by being seen alive,
        # and a running one is not adopted twice.
        if phase in (Phase.UNKNOWN, Phase.WAITING, Phase.DOWN):
            return replace(state, phase=Phase.RUNNING, not_before=None)
        return state
    if event is Event.EXITED:
        # PARKED, REFUSED and DOWN stay: none of them has a generation whose exit could count
        if phase in (Phase.PARKED, Phase.REFUSED, Phase.DOWN):
            return state
        exits = tuple(moment for moment in state.exits if now - moment < policy.interval_seconds) + (now,)
        if len(exits) > policy.attempts:
            if policy.mode == "fail":
                # RUNNING|WAITING|UNKNOWN -> PARKED: the budget is spent
                return TaskState(Phase.PARKED, exits, None)
            # RUNNING|WAITING|UNKNOWN -> WAITING until the oldest exit leaves the window
            return TaskState(Phase.WAITING, exits, max(exits[0] + policy.interval_seconds, now + policy.delay_seconds))
        # RUNNING|WAITING|UNKNOWN -> WAITING for the restart delay
        return TaskState(Phase.WAITING, exits, now + policy.delay_seconds)
    if event is Event.UNPARKED:
        # PARKED -> UNKNOWN with the spent budget cleared (any other phase: the same reset)
        return TaskState()
    if event is Event.STOPPED:
        # any -> UNKNOWN, keeping the exit history (a stop is not a crash, and not a reset either)
        return TaskState(Phase.UNKNOWN, state.exits, None)
    if event is Event.REFUSED:
        # UNKNOWN|WAITING -> REFUSED: no launch is attempted, so no exit is counted
        if phase in (Phase.UNKNOWN, Phase.WAITING):
            return TaskState(Phase.REFUSED, state.exits, None)
        return state
    if event is Event.ADMITTED:
        # REFUSED -> UNKNOWN: the cause is gone, the task may launch
        if phase is Phase.REFUSED:
            return TaskState(Phase.UNKNOWN, state.exits, None)
        return state
    if event is Event.GONE:
        # UNKNOWN|RUNNING|WAITING -> DOWN: an adopt-only task without a live generation is not an
        # exit to count and not a budget to spend; the exit history and any park stay as they were
        if phase in (Phase.UNKNOWN, Phase.RUNNING, Phase.WAITING):
            return TaskState(Phase.DOWN, state.exits, None)
        return state
    raise ValueError(event)
