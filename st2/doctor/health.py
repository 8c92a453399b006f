"""Supervisor and task health for ``st2 doctor``.

:func:`task_health` has the Doctor host-check signature ``(catalog_root, host, now_ms) ->
list[Finding]``. It reads only: launch records, park markers, live processes.

- A running seat is healthy when each declared task is running; a parked task, a task that is
  down, or evidence that cannot be trusted is a failure.
- A retired seat is healthy only once every declared task has no record at all (live or dead).
- A suspended seat is healthy when no declared task is live and every retained dead record is
  ``keep``-pinned; this weaker state never counts as retirement.
- A PTY task whose socket path cannot be bound is a failure naming the path and the overage.

:func:`supervisor_health` reports whether this catalog's supervisor runs on this host
(``--require-supervisor`` turns its absence into a failure).
"""

from __future__ import annotations

from pathlib import Path

from st2.catalog.location import CatalogLocation
from st2.declarations.model import ADOPT_ONLY, RETIRED, RUNNING, SUSPENDED
from st2.doctor.findings import Finding, Severity
from st2.supervisor import park, supervisor_record
from st2.supervisor.catalog_view import read_catalog
from st2.supervisor.inventory import observe, orphans
from st2.supervisor.backends.backend import RuntimeState
from st2.runtime.scope import RuntimeScope

FAILURE = Severity.FAILURE
ADVISORY = Severity.ADVISORY


def task_health(catalog_root: Path, host: str, now_ms: int, scope: RuntimeScope | None = None) -> list[Finding]:
    location = CatalogLocation(Path(catalog_root), host)
    scope = scope or RuntimeScope(location.root, host)
    findings: list[Finding] = []
    declared: set[str] = set()
    view = read_catalog(location)
    for plan in view.plans:
        for error in plan.errors:
            findings.append(Finding(FAILURE, plan.agent, "task-lowering", error))
        for task in plan.tasks:
            declared.add(task.runtime_id)
            observation = observe(scope, location, task.runtime_id)
            findings.extend(_task_findings(plan, task, observation, scope))
    for line in orphans(scope, location, declared):  # a broken declaration's tasks included
        findings.append(Finding(ADVISORY, line.split()[2], "task-undeclared", line))
    return findings


def _task_findings(plan, task, observation, scope: RuntimeScope) -> list[Finding]:
    rid = task.runtime_id
    state = observation.state
    if plan.desired_state == RETIRED:
        if state is RuntimeState.ABSENT:
            return []
        what = "alive" if state in (RuntimeState.RUNNING, RuntimeState.VANISHED) else "a dead record remains"
        return [Finding(FAILURE, plan.agent, "retirement-incomplete",
                        f"{rid}: retired, but {what}; retirement is complete only when every task record is gone")]
    if plan.desired_state == SUSPENDED:
        if state in (RuntimeState.RUNNING, RuntimeState.VANISHED):
            return [Finding(FAILURE, plan.agent, "suspension-incomplete", f"{rid}: suspended, but still alive")]
        if state is RuntimeState.ABSENT or (state is RuntimeState.EXITED and task.keep):
            return []
        if state is RuntimeState.EXITED:
            return [Finding(FAILURE, plan.agent, "suspension-incomplete",
                            f"{rid}: suspended, and a dead record that is not keep-pinned remains")]
        return [Finding(FAILURE, plan.agent, "task-evidence", f"{rid}: {observation.error}")]
    if plan.desired_state != RUNNING:
        return []
    findings = []
    if task.kind == "pty":
        refusal = scope.socket_admission_error(rid)
        if refusal is not None:
            return [Finding(FAILURE, plan.agent, "socket-admission", f"{rid}: {refusal}")]
    reading = park.read(scope, rid)
    if reading.belief is park.Belief.PARKED:
        recovery = reading.marker.recovery_argv()
        hint = f"; recover with: {' '.join(recovery)}" if recovery else ""
        findings.append(Finding(FAILURE, plan.agent, "task-parked", f"{rid}: parked ({reading.marker.reason}){hint}"))
    elif reading.belief is park.Belief.INDETERMINATE:
        findings.append(Finding(FAILURE, plan.agent, "task-evidence", f"{rid}: {reading.error}"))
    if state is RuntimeState.RUNNING:
        return findings
    if state in (RuntimeState.INDETERMINATE, RuntimeState.VANISHED):
        findings.append(Finding(FAILURE, plan.agent, "task-evidence", f"{rid}: {observation.error}"))
    elif task.lifecycle == ADOPT_ONLY:
        findings.append(Finding(ADVISORY, plan.agent, "task-down", f"{rid}: {state.value}, not running; st2 never "
                                "starts an adopt-only task: start it yourself and the next pass adopts it"))
    elif reading.belief is not park.Belief.PARKED:
        findings.append(Finding(FAILURE, plan.agent, "task-down", f"{rid}: {state.value}, not running"))
    return findings


def supervisor_health(catalog_root: Path, host: str, now_ms: int, *, require: bool = False,
                      scope: RuntimeScope | None = None) -> list[Finding]:
    scope = scope or RuntimeScope(Path(catalog_root), host)
    identity = supervisor_record.running(scope)
    if identity is not None:
        return []
    severity = FAILURE if require else ADVISORY
    return [Finding(severity, "supervisor", "supervisor-running",
                    f"no `st2 up` is running for {catalog_root} on {host}")]
