"""One serialized reconcile pass: compare the lowered catalog with launch records and live
processes, then adopt, launch, restart, park or stop.

Rules a pass keeps:

- a live task (PID **and** start time match its record, and for PTY tasks its tmux server
  answers naming it) is adopted, exactly once per supervisor, never relaunched — except a
  resource provider runtime whose recorded argv digest is not its declaration's (an edited
  ``resource-provider``, or another st2 build's built-in runtime): it holds no agent state, so it
  is stopped and launched as declared in the same pass (a replacement, not an exit: no restart
  budget is spent), and the resource host fences its output by generation;
- only a task with no live generation is launched; a record whose PID now belongs to another
  process proves the old generation gone, so it is replaced, never adopted;
- an ``adopt-only`` task is adopted like any other but never launched or restarted: without a
  live generation it stays down (no exit counted, never parked, its dead record left as
  evidence) until a generation appears to adopt;
- evidence that cannot be trusted (malformed record, a live PID whose tmux server no longer
  answers) holds the task: launching could duplicate a survivor;
- a task its backend refuses at admission (it could never start, e.g. an unbindable session
  socket path) is parked without advising ``st2 unpark``, which would relaunch into the same
  failure; it launches by itself once admission passes again;
- a seat whose declaration does not load or lower is left exactly as it is;
- a seat declaring a ``worktree`` is rendered into and launched only once its worktree is ready
  (:mod:`st2.supervisor.worktrees`); a held worktree holds the seat, naming why;
- companions (DING, launched streams) run only beside a running canonical agent task and are
  stopped while it is held, parked, suspended, retired or down;
- suspended and retired seats have their tasks stopped; retirement also removes their records
  and logs, suspension keeps a dead record only when the task is ``keep``-pinned.

Processes, terminals and signals are reached only through the :class:`Backend` of each task kind,
so every rule above runs against a fake backend (tests/supervisor/test_reconcile_rules.py).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, TextIO

from st2.catalog.location import CatalogLocation
from st2.base.clock import SYSTEM_CLOCK, Clock
from st2.declarations.model import ADOPT_ONLY, RETIRED, SUSPENDED
from st2.supervisor import holds, park, supervisor_record
from st2.supervisor.budgets import BudgetPublisher
from st2.supervisor.catalog_view import CatalogView
from st2.supervisor.lowering import SeatPlan, Task, TaskRole, st2_command, task_base_environment
from st2.supervisor.materialize import MaterializationRefused, materialize
from st2.supervisor.moves import Mover
from st2.supervisor.notice import CrashLoopNotice, send_crash_loop_notice
from st2.supervisor.worktrees import WorktreeKeeper
from st2.accounts.admission import Admission
from st2.supervisor.relaunch_admission import DRAIN_SECONDS, admitted, drain_queue
from st2.supervisor.restart_policy import Event, Phase, TaskState, transition
from st2.runtime import launch_record
from st2.supervisor.backends.backend import Backend, LaunchError, Observation, RuntimeState, TaskSpec
from st2.supervisor.backends.exec_backend import remove_logs
from st2.runtime.launch_record import MalformedRecord
from st2.runtime.scope import RuntimeScope


@dataclass(frozen=True)
class Selection:
    """``--agent`` / ``--task``: which tasks a pass may act on (None = all)."""

    agent: str | None = None
    task: str | None = None

    def covers(self, plan: SeatPlan, task: Task | None = None) -> bool:
        if self.agent is not None and self.agent not in (plan.identity, plan.agent):
            return False
        if self.task is not None and task is not None and task.runtime_id != self.task:
            return False
        if self.task is not None and task is None:
            return any(candidate.runtime_id == self.task for candidate in plan.tasks)
        return True

    @property
    def everything(self) -> bool:
        return self.agent is None and self.task is None


@dataclass
class PassReport:
    number: int = 0
    launched: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    restarted: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    parked: list[str] = field(default_factory=list)
    unparked: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    queued: list[str] = field(default_factory=list)   # agent tasks waiting for their account's admission
    running: list[str] = field(default_factory=list)
    running_identities: dict = field(default_factory=dict)   # runtime id -> ProcessIdentity
    errors: list[str] = field(default_factory=list)
    next_deadline: float | None = None

    def summary(self) -> str:
        parts = [f"pass {self.number}:", f"running={len(self.running)}"]
        for name in ("launched", "adopted", "restarted", "stopped", "parked", "unparked", "held"):
            values = getattr(self, name)
            if values:
                parts.append(f"{name}={','.join(values)}")
        if self.queued:
            parts.append(f"queued={len(self.queued)}")
        if self.errors:
            parts.append(f"errors={len(self.errors)}")
        return " ".join(parts)


class Reconciler:
    """Holds the per-task lifecycle between passes. One per running supervisor."""

    def __init__(self, location: CatalogLocation, *, clock: Clock = SYSTEM_CLOCK,
                 scope: RuntimeScope | None = None, output: TextIO | None = None,
                 notify: Callable[[CrashLoopNotice], str | None] = send_crash_loop_notice,
                 backends: Mapping[str, Backend] | None = None, drain_seconds: float = DRAIN_SECONDS) -> None:
        """``backends`` maps a task kind (``exec``, ``pty``) to its backend; by default the real
        exec and tmux backends over ``scope``."""
        self.location = location
        self.clock = clock
        self.scope = scope or RuntimeScope(location.root, location.host)
        self.output = output or sys.stderr
        self.backends: Mapping[str, Backend] = backends if backends is not None else _real_backends(
            self.scope, location, clock, self.say)
        # The scope's seat host (st2.seathost), kept answering by every pass that runs a seat.
        self.seat_host = getattr(self.backends.get("exec"), "seat_host", None)
        self.notify = notify
        self.states: dict[str, TaskState] = {}
        self.noticed: set[str] = set()
        self.reported_errors: set[str] = set()
        self.identity = supervisor_record.own_identity()
        self.passes = 0
        self.launched_pids: set[int] = set()   # exec tasks this supervisor started (its children)
        self.worktrees = WorktreeKeeper(self.scope, clock, self.say)
        self.admission = Admission(self.scope.directory, clock)   # starts per account (relaunch storms)
        self.drain_seconds, self.interrupted = drain_seconds, lambda: False   # the loop's stop ends a drain
        self.explicit_start = False   # the pass acts on a seat an operator selected alone
        self.budgets = BudgetPublisher(self.scope.directory, location.root, self.say)   # each account's record
        self.accounts: dict = {}                # catalog.kdl's accounts, as of this pass
        self.mover = Mover(self.location, self.scope, clock, self.say)

    # -- helpers -------------------------------------------------------------------------
    def backend(self, kind: str) -> Backend:
        return self.backends[kind]

    def reap(self) -> set[int]:
        """Collect exited children of every backend; return their PIDs."""
        reaped: set[int] = set()
        for backend in self.backends.values():
            reaped |= backend.reap()
        return reaped

    def say(self, line: str) -> None:
        print(f"st2 up: {line}", file=self.output, flush=True)

    def observe(self, runtime_id: str) -> Observation:
        try:
            record = launch_record.read(self.scope, runtime_id)
        except MalformedRecord as error:
            return Observation(runtime_id, RuntimeState.INDETERMINATE, error=str(error))
        if record is None:
            return Observation(runtime_id, RuntimeState.ABSENT)
        return self.backend(record.kind).observe(record)

    # -- the pass ------------------------------------------------------------------------
    def run_pass(self, view: CatalogView, selection: Selection = Selection(),
                 materialize_only: bool = False) -> PassReport:
        self.passes += 1
        report = PassReport(number=self.passes)
        self.reap()
        report.errors.extend(view.errors)
        self.admission.begin_pass()
        self.queued_tasks: dict = {}   # runtime id -> (task, plan) waiting for its account's admission
        self.explicit_start = not selection.everything
        if not materialize_only:
            self.budgets.publish(view)
        self.accounts = dict(getattr(getattr(view, "catalog", None), "accounts", None) or {})
        for runtime_id in park.take_unpark_requests(self.scope):
            state = self.states.get(runtime_id, TaskState())
            park.clear(self.scope, runtime_id)
            self.noticed.discard(runtime_id)
            if state.phase in (Phase.PARKED, Phase.REFUSED) or runtime_id in self.states:
                self.states[runtime_id] = transition(state, Event.UNPARKED, _any_policy(view, runtime_id), self.clock.monotonic())
            report.unparked.append(runtime_id)
        if self.seat_host is not None and not materialize_only and any(_served(plan) for plan in view.plans):
            self.seat_host.ensure()   # a SIGKILLed host is replaced here; its children run on
        held = holds.held(self.scope)
        declared: set[str] = set()
        owners: dict[str, list[str]] = {}
        for plan in view.plans:
            for task in plan.tasks:
                owners.setdefault(task.runtime_id, []).append(plan.agent)
        contested = {rid: agents for rid, agents in owners.items() if len(agents) > 1}
        worktrees = self.worktrees.begin(view.plans)
        for plan in view.plans:
            declared.update(task.runtime_id for task in plan.tasks)
            if not selection.covers(plan):
                continue
            if plan.errors:
                report.errors.extend(plan.errors)
                continue
            clashes = [rid for rid in (task.runtime_id for task in plan.tasks) if rid in contested]
            if clashes:
                # Two seats claiming one runtime id would adopt, restart or stop each other's task.
                report.errors.extend(f"{plan.agent}: runtime id {rid!r} is also declared by "
                                     f"{', '.join(a for a in contested[rid] if a != plan.agent)}; leaving the seat alone"
                                     for rid in clashes)
                continue
            launch_allowed = True
            if plan.running and plan.declaration is not None and plan.declaration.worktree is not None:
                unready = worktrees.ensure(plan)   # before the render, which writes into the worktree
                if unready is not None:
                    report.errors.append(unready)
                    launch_allowed = False
            if launch_allowed and plan.running and plan.declaration is not None and plan.declaration.render:
                try:
                    written = materialize(plan)
                    for target in written:
                        self.say(f"materialized {target} for {plan.agent}")
                except MaterializationRefused as refusal:
                    report.errors.append(str(refusal))
                    launch_allowed = False
            if materialize_only:
                continue
            self._reconcile_seat(plan, selection, held, launch_allowed, report)
        if not materialize_only and selection.everything and not view.errors and not any(p.errors for p in view.plans):
            self._clean_undeclared(declared, report)
        drain_queue(self, report)
        slot = None if materialize_only else self.admission.end_pass()   # wake at the next admission slot
        if slot is not None:
            report.next_deadline = min(filter(None, (report.next_deadline, slot)))
        self._print(report)
        return report

    def _reconcile_seat(self, plan: SeatPlan, selection: Selection, held: set[str],
                        launch_allowed: bool, report: PassReport) -> None:
        agent_task = plan.agent_task
        ordered = sorted(plan.tasks, key=lambda task: (task.companion, task.role is not TaskRole.AGENT, task.name))
        agent_running = False
        for task in ordered:
            if task.companion:
                eligible = agent_task is not None and agent_running and agent_task.runtime_id not in held
                wanted = plan.running and eligible and task.runtime_id not in held
            else:
                wanted = plan.running and task.runtime_id not in held
            if not selection.covers(plan, task):
                if task is agent_task:
                    agent_running = self.observe(task.runtime_id).state is RuntimeState.RUNNING
                continue
            if task.runtime_id in held and plan.running:
                report.held.append(task.runtime_id)
                self.states[task.runtime_id] = transition(self.states.get(task.runtime_id, TaskState()), Event.STOPPED, task.restart, self.clock.monotonic())
                if task.companion:
                    self._stop(task, plan, report)
                continue
            if wanted:
                running = self._keep_running(task, plan, launch_allowed, report)
            else:
                self._stop(task, plan, report)
                running = False
            if task is agent_task:
                agent_running = running

    def _keep_running(self, task: Task, plan: SeatPlan, launch_allowed: bool, report: PassReport) -> bool:
        now = self.clock.monotonic()
        rid = task.runtime_id
        state = self.states.get(rid, TaskState())
        observation = self.observe(rid)
        if observation.state is RuntimeState.RUNNING and (self._replaced(task, observation, report)
                                                          or self._moved(task, plan, observation, report)):
            state = transition(state, Event.STOPPED, task.restart, now)
            self.states[rid] = state
        elif observation.state is RuntimeState.RUNNING:
            adopted = transition(state, Event.ADOPTED, task.restart, now)
            if adopted.phase is Phase.RUNNING and state.phase is not Phase.RUNNING:
                report.adopted.append(rid)
            self.states[rid] = adopted
            report.running.append(rid)
            report.running_identities[rid] = observation.record.identity
            return True
        if observation.state in (RuntimeState.VANISHED, RuntimeState.INDETERMINATE) and not observation.pid_reused:
            report.errors.append(f"{rid}: holding, not launching: {observation.error}")
            return False
        if observation.pid_reused:
            report.errors.append(f"{rid}: not adopted: {observation.error}")
        if task.lifecycle == ADOPT_ONLY:
            self.states[rid] = transition(state, Event.GONE, task.restart, now)
            return False
        if observation.state is RuntimeState.EXITED or observation.pid_reused:
            if state.phase in (Phase.RUNNING, Phase.UNKNOWN):
                state = transition(state, Event.EXITED, task.restart, now)
                self.states[rid] = state
        if state.phase is Phase.PARKED:
            self._parked(task, plan, state, report)
            return False
        if not launch_allowed:
            return False
        refusal = self.backend(task.kind).admission_error(rid)
        if refusal is not None:
            report.errors.append(f"{rid}: refused at admission: {refusal}")
            self.states[rid] = transition(state, Event.REFUSED, task.restart, now)
            if self.states[rid].phase is Phase.REFUSED:
                self._park(task, plan, report, reason=f"refused at admission: {refusal}", attempts=0,
                           recoverable=False)
            return False
        if state.phase is Phase.REFUSED:
            # The cause is gone (the declaration or the pty root changed): lift the park we wrote.
            state = transition(state, Event.ADMITTED, task.restart, now)
            self.states[rid] = state
            park.clear(self.scope, rid)
            self.noticed.discard(rid)
            report.unparked.append(rid)
        if not state.launchable(now):
            if state.not_before is not None:
                report.next_deadline = min(filter(None, (report.next_deadline, state.not_before)))
            return False
        if not admitted(self.admission, self.accounts, plan, task, self.explicit_start or rid in report.unparked, report):
            self.queued_tasks[rid] = (task, plan)
            return False
        restarting = state.phase is Phase.WAITING
        spec = TaskSpec(rid, task.kind, task.argv, task.environment, task.directory)
        try:
            record = self.backend(task.kind).launch(spec)
            self.admission.launched(rid)   # an admitted start counts from here (its process exists)
        except LaunchError as error:
            report.errors.append(str(error))
            state = transition(state, Event.EXITED, task.restart, now)
            self.states[rid] = state
            if state.phase is Phase.PARKED:
                self._parked(task, plan, state, report)
            elif state.not_before is not None:
                report.next_deadline = min(filter(None, (report.next_deadline, state.not_before)))
            return False
        self.states[rid] = transition(state, Event.LAUNCHED, task.restart, now)
        if record.kind == "exec":
            self.launched_pids.add(record.pid)
        (report.restarted if restarting else report.launched).append(f"{rid}[{record.pid}]")
        report.running.append(rid)
        report.running_identities[rid] = record.identity
        return True

    def _replaced(self, task: Task, observation: Observation, report: PassReport) -> bool:
        """Stop a running resource provider runtime launched from another argv than its
        declaration's; True when it was stopped (the caller launches the declared one)."""
        record = observation.record
        if task.role is not TaskRole.RESOURCE or record.argv_digest == launch_record.argv_digest(list(task.argv)):
            return False
        self.backend(record.kind).kill(record)
        self.say(f"replacing {task.runtime_id}[{record.pid}]: its declared argv changed")
        report.stopped.append(task.runtime_id)
        return True

    def _moved(self, task: Task, plan: SeatPlan, observation: Observation, report: PassReport) -> bool:
        """Stop a running agent task that moves to another account now (:class:`st2.supervisor.moves.Mover`);
        True when it was stopped (the caller launches it on the plan's account)."""
        if task.role is not TaskRole.AGENT or observation.record.account == plan.account:
            return False
        if not self.mover.due(task, plan, observation.record):
            return False
        self.backend(observation.record.kind).kill(observation.record)
        report.stopped.append(task.runtime_id)
        lost = self.mover.moved(task, plan, observation.record, self.accounts)
        if lost is not None:
            report.errors.append(lost)
        return True

    def _parked(self, task: Task, plan: SeatPlan, state: TaskState, report: PassReport) -> None:
        self._park(task, plan, report, attempts=len(state.exits), recoverable=True,
                   reason=f"exited {len(state.exits)} times within {task.restart.interval_seconds:g}s (restart mode fail)")

    def _park(self, task: Task, plan: SeatPlan, report: PassReport, *, reason: str, attempts: int,
              recoverable: bool) -> None:
        """Make sure this supervisor's park marker for ``task`` is on disk, and tell the seat's
        supervising agent once. An unrecoverable park advises no ``st2 unpark``."""
        rid = task.runtime_id
        reading = park.read(self.scope, rid)
        current = reading.marker if reading.belief is park.Belief.PARKED else None
        if current is None or current.supervisor != self.identity or current.recoverable != recoverable:
            marker = park.ParkMarker(
                runtime_id=rid, catalog=str(self.location.root), host=self.location.host,
                supervisor=self.identity, parked_at_ms=self.clock.wall_ms(),
                reason=reason, attempts=attempts, recoverable=recoverable,
            )
            park.write(self.scope, marker)
            report.parked.append(rid)
            recovery = marker.recovery_argv()
            if recovery is not None:
                self.say(f"GAVE UP on {rid}: crash-looping past its restart policy (mode fail); parked. "
                         f"Recover it with: {' '.join(recovery)}")
            else:
                self.say(f"PARKED {rid}: it can never start as declared ({reason}); unparking would "
                         f"relaunch into the same failure, so fix the cause and st2 up launches it")
        else:
            marker = current
        if rid not in self.noticed:
            self.noticed.add(rid)
            if plan.supervisor:
                failure = self.notify(CrashLoopNotice(
                    catalog=self.location.root, runtime_id=rid, agent=plan.agent,
                    supervisor=plan.supervisor, attempts=marker.attempts,
                    parked_at_ms=marker.parked_at_ms, recovery=marker.recovery_argv(),
                    reason=marker.reason,
                ))
                if failure is not None:
                    report.errors.append(f"{rid}: crash-loop notice to {plan.supervisor} not sent: {failure}")

    def _stop(self, task: Task, plan: SeatPlan, report: PassReport) -> None:
        rid = task.runtime_id
        observation = self.observe(rid)
        record = observation.record
        state = self.states.get(rid, TaskState())
        if state.phase is not Phase.UNKNOWN or observation.state is not RuntimeState.ABSENT:
            self.states[rid] = transition(state, Event.STOPPED, task.restart, self.clock.monotonic())
        if record is None:
            if observation.state is RuntimeState.INDETERMINATE:
                report.errors.append(f"{rid}: cannot stop: {observation.error}")
            return
        if observation.state in (RuntimeState.RUNNING, RuntimeState.VANISHED):
            self.backend(record.kind).kill(record)
            report.stopped.append(rid)
        keep_dead_record = plan.desired_state == SUSPENDED and task.keep
        if not keep_dead_record:
            launch_record.remove(self.scope, rid)
        if plan.desired_state == RETIRED and record.log:
            remove_logs(Path(record.log))
        park.clear(self.scope, rid)

    def _clean_undeclared(self, declared: set[str], report: PassReport) -> None:
        """Forget dead records of tasks no declaration names; a live undeclared task is left
        alone (only ``st2 down`` kills) and reported once."""
        for rid in launch_record.recorded_ids(self.scope):
            if rid in declared:
                continue
            observation = self.observe(rid)
            if observation.state in (RuntimeState.EXITED,) or observation.pid_reused:
                launch_record.remove(self.scope, rid)
            elif observation.state is RuntimeState.RUNNING:
                report.errors.append(f"{rid}: running but no longer declared; `st2 down` stops it")

    def _print(self, report: PassReport) -> None:
        for rid in report.adopted:
            self.say(f"adopted {rid}")
        for name in ("launched", "restarted", "stopped", "unparked", "held"):
            values = getattr(report, name)
            if values:
                self.say(f"{name} {' '.join(values)}")
        current = set(report.errors)
        for error in report.errors:
            if error not in self.reported_errors:
                self.say(f"error: {error}")
        self.reported_errors = current


def _real_backends(scope: RuntimeScope, location: CatalogLocation, clock: Clock,
                   say: Callable[[str], None] | None = None) -> dict[str, Backend]:
    from st2.supervisor.backends.exec_backend import ExecBackend
    from st2.supervisor.backends.tmux_backend import TmuxBackend

    command = st2_command()
    return {"exec": ExecBackend(scope, location.paths.logs, clock, seat_host=_seat_host(scope, location, command, say),
                                st2_command=command),
            "pty": TmuxBackend(scope, clock)}


SEAT_HOST_KNOB = "ST2_SEAT_HOST"


def _served(plan: SeatPlan) -> bool:
    """A running seat whose per-seat processes the seat host forks or wakes: one with a DING
    companion or a typed driver block (a native wrapper's pump registers its watch there)."""
    if not plan.running or plan.errors:
        return False
    return any(task.role is TaskRole.DING for task in plan.tasks) or bool(
        plan.declaration is not None and plan.declaration.drivers)


def _seat_host(scope: RuntimeScope, location: CatalogLocation, command: list[str], say):
    """The scope's seat host client (None with ``ST2_SEAT_HOST=off``: every task is spawned)."""
    import os

    if os.environ.get(SEAT_HOST_KNOB, "") == "off":
        return None
    from st2.seathost.client import SeatHostClient
    from st2.supervisor.backends import transport

    return SeatHostClient(scope.directory, location.paths.logs / f"{location.host}.seat-host.log", command,
                          task_base_environment(), prefix=transport.prefix(f"{location.host}.seat-host"), say=say)


def _any_policy(view: CatalogView, runtime_id: str):
    from st2.declarations.model import DEFAULT_RESTART

    for plan in view.plans:
        for task in plan.tasks:
            if task.runtime_id == runtime_id:
                return task.restart
    return DEFAULT_RESTART
