"""``st2 tasks --json``: the ``st2.task-inventory.v1`` envelope.

A read-only join of the lowered catalog to launch records and live processes. It launches,
kills, cleans and creates nothing (a missing runtime scope reads as every task absent). The
envelope is ``complete`` only when every piece of evidence was read and trusted: a declaration
that does not load, declarations that change while being observed, duplicate runtime ids,
malformed or unreadable records, a reused PID, a PTY whose server no longer answers, or an
unbelievable park marker make it incomplete, and the verb then exits non-zero. A believable
park is reported beside the unmodified runtime observation, with the recovery argv naming the
exact catalog and host. A seat's agent task waiting for its account's admission
(:mod:`st2.accounts.admission`) carries ``admission`` (the account, its 1-based place in the
queue, ``startsAt`` the expected start in ms); every other row carries ``"admission":null``.
"""

from __future__ import annotations

import json

from st2.catalog.location import CatalogLocation
from st2.declarations.model import RETIRED, RUNNING
from st2.fs.read import RUNTIME_LIMIT, read_bounded
from st2.supervisor import park
from st2.supervisor.catalog_view import read_catalog
from st2.runtime import launch_record
from st2.supervisor.backends.backend import Observation, RuntimeState
from st2.supervisor.backends.exec_backend import ExecBackend
from st2.runtime.launch_record import MalformedRecord
from st2.runtime.scope import RuntimeScope
from st2.supervisor.backends.tmux_backend import TmuxBackend

SCHEMA = "st2.task-inventory.v1"


def _generation(location: CatalogLocation) -> bytes | None:
    try:
        return read_bounded(location.paths.catalog_generation, RUNTIME_LIMIT, follow_symlinks=False)
    except OSError:
        return None


def observe(scope: RuntimeScope, location: CatalogLocation, runtime_id: str) -> Observation:
    try:
        record = launch_record.read(scope, runtime_id)
    except MalformedRecord as error:
        return Observation(runtime_id, RuntimeState.INDETERMINATE, error=str(error))
    if record is None:
        return Observation(runtime_id, RuntimeState.ABSENT)
    backend = TmuxBackend(scope) if record.kind == "pty" else ExecBackend(scope, location.paths.logs)
    return backend.observe(record)


def inventory(location: CatalogLocation, scope: RuntimeScope | None = None, *, recheck: bool = True) -> dict:
    """Build the envelope (a dict in wire order). ``recheck`` reads the catalog once more after
    observing, to report declarations that changed meanwhile; a live view that re-reads the
    inventory at every declaration change it sees (`st2 top`) passes False."""
    scope = scope or RuntimeScope(location.root, location.host)
    errors: list[str] = []
    if not location.root.is_dir():
        errors.append(f"catalog {location.root} does not exist")
        return _envelope(location, errors, [])
    generation_before = _generation(location)
    view = read_catalog(location)
    errors.extend(view.errors)
    owners: dict[str, list[str]] = {}
    rows = []
    admissions: dict = {}   # account -> its admission record, read once
    for plan in view.plans:
        errors.extend(plan.errors)
        for task in plan.tasks:
            owners.setdefault(task.runtime_id, []).append(f"{plan.agent}/{task.name}")
            observation = observe(scope, location, task.runtime_id)
            if observation.error and observation.state is not RuntimeState.RUNNING:
                errors.append(observation.error)
            reading = park.read(scope, task.runtime_id)
            if reading.belief is park.Belief.INDETERMINATE:
                errors.append(reading.error)
            rows.append(_row(plan, task, observation, reading, _admission(scope, plan, task, admissions)))
    for runtime_id, names in sorted(owners.items()):
        if len(names) > 1:
            errors.append(f"duplicate runtime id {runtime_id!r} is declared by {', '.join(names)}")
    errors.extend(orphans(scope, location, set(owners)))
    if recheck and (read_catalog(location).fingerprint() != view.fingerprint()
                    or _generation(location) != generation_before):
        errors.append("declarations changed while the inventory was observed; observe again")
    rows.sort(key=lambda row: (row["agent"], row["task"], row["runtimeId"]))
    return _envelope(location, _unique(errors), rows)


def orphan_stop_argv(location: CatalogLocation, runtime_id: str) -> list[str]:
    """The exact command that stops one orphan task (and nothing else)."""
    return ["st2", "down", "--catalog", str(location.root), "--host", location.host, runtime_id]


def orphans(scope: RuntimeScope, location: CatalogLocation, declared: set[str]) -> list[str]:
    """One line per task that runs with a launch record but no loadable declaration claims
    (its declaration deleted, or broken, while it ran): it keeps running (only `st2 down` kills)
    but is no longer governed, so it is named with the command that stops it."""
    found = []
    for runtime_id in launch_record.recorded_ids(scope):
        if runtime_id in declared:
            continue
        observation = observe(scope, location, runtime_id)
        if observation.state is RuntimeState.RUNNING:
            found.append(f"orphan task {runtime_id} (pid {observation.record.pid}) is running but no loadable "
                         f"declaration claims it (deleted or broken); stop it with: "
                         + " ".join(orphan_stop_argv(location, runtime_id)))
    return found


def _unique(errors: list[str]) -> list[str]:
    seen: list[str] = []
    for error in errors:
        if error and error not in seen:
            seen.append(error)
    return seen


def _envelope(location: CatalogLocation, errors: list[str], rows: list[dict]) -> dict:
    return {
        "schema": SCHEMA,
        "catalog": str(location.root),
        "host": location.host,
        "complete": not errors,
        "errors": errors,
        "tasks": rows,
    }


def _admission(scope: RuntimeScope, plan, task, admissions: dict) -> dict | None:
    """Where the seat's agent task waits in its account's relaunch queue, or None."""
    if plan.account is None or task is not plan.agent_task:
        return None
    from st2.accounts.admission import read_file

    if plan.account not in admissions:
        admissions[plan.account] = read_file(scope.directory, plan.account)
    record = admissions[plan.account]
    position = record.position(task.runtime_id) if record is not None else None
    if position is None:
        return None
    return {"account": plan.account, "position": position, "startsAt": record.queue[position - 1].starts_at_ms}


def _row(plan, task, observation: Observation, reading: park.ParkReading, admission: dict | None = None) -> dict:
    running = observation.state is RuntimeState.RUNNING
    record = observation.record
    parked = None
    if reading.belief is park.Belief.PARKED:
        marker = reading.marker
        parked = {
            "reason": marker.reason,
            "parkedAtMs": marker.parked_at_ms,
            "supervisorPid": marker.supervisor.pid,
            "recovery": marker.recovery_argv(),
        }
    return {
        "agent": plan.agent,
        "task": task.name,
        "runtimeId": task.runtime_id,
        "kind": task.kind,
        "lifecycle": task.lifecycle,
        "retired": plan.desired_state == RETIRED,
        "desiredState": "running" if plan.desired_state == RUNNING else "absent",
        "agentDesiredState": plan.desired_state,
        "agentDesiredStateReason": plan.desired_state_reason,
        "runtime": {
            "state": observation.state.value,
            "pid": record.pid if running else None,
            "createdAt": record.created_at if running else None,
            "generationId": record.generation_id if running else None,
            "error": None if running else observation.error,
        },
        "parked": parked,
        "admission": admission,
    }


def report(location: CatalogLocation, as_json: bool, echo) -> int:
    """``st2 tasks [--json]``: print the inventory through ``echo(text, err=False)`` (the envelope
    as JSON, or one line per task and one ``incomplete:`` line on stderr per error) and return
    the verb's exit status: 0 when the envelope is complete, 1 otherwise."""
    envelope = inventory(location)
    if as_json:
        echo(to_json(envelope))
    else:
        for row in envelope["tasks"]:
            runtime = row["runtime"]
            pid = f" pid {runtime['pid']}" if runtime["pid"] else ""
            parked = ""
            if row["parked"] and row["parked"]["recovery"]:
                parked = "  PARKED: " + " ".join(row["parked"]["recovery"])
            elif row["parked"]:
                parked = f"  PARKED (can never start as declared: {row['parked']['reason']})"
            queued = ""
            if row["admission"]:
                queued = f"  QUEUED on account {row['admission']['account']} #{row['admission']['position']}"
            echo(f"{row['runtimeId']:40} {row['kind']:4} {runtime['state']}{pid}{parked}{queued}")
        for error in envelope["errors"]:
            echo(f"incomplete: {error}", err=True)
    return 0 if envelope["complete"] else 1


def to_json(envelope: dict) -> str:
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False)
