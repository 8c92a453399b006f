"""``st2 down``: the only command that kills tasks.

``st2 down`` (no identities) first stops this catalog's running supervisor on this host (a
normal stop, which leaves tasks alone), then kills every recorded task — tmux server or whole
process group — and removes its record, and retires the scope's seat host. ``st2 down
<identity>…`` kills just those seats' tasks and holds them so a running supervisor does not
relaunch them until the next ``st2 up``.
Idempotent: tearing down what is already gone succeeds.

Every task ``st2 down`` selects gets the resumable-session stop marker
(:func:`st2.runtime.resumable_session.mark_stopped`), durable across a reboot: its next launch
starts a fresh harness session instead of resuming the recorded one, unless ``st2 up --resume``.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass, field

from st2.catalog.location import CatalogLocation
from st2.supervisor import holds, park, supervisor_record
from st2.runtime import launch_record
from st2.supervisor.backends.exec_backend import ExecBackend
from st2.process.identity import Liveness, liveness
from st2.runtime.launch_record import MalformedRecord
from st2.runtime.scope import RuntimeScope
from st2.supervisor.backends.tmux_backend import TmuxBackend

SUPERVISOR_STOP_SECONDS = 15.0


@dataclass
class TeardownReport:
    stopped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    supervisor_stopped: int | None = None


def down(location: CatalogLocation, identities: list[str]) -> TeardownReport:
    scope = RuntimeScope(location.root, location.host)
    report = TeardownReport()
    if not scope.exists():
        if identities:
            for identity in identities:
                _check_known(location, identity, report)
                _mark_stopped(location, _declared_ids(location, _agent(location, identity)), report)
        return report
    if not identities:
        _stop_supervisor(scope, report)
        selected = launch_record.recorded_ids(scope)
    else:
        selected = []
        recorded = launch_record.recorded_ids(scope)
        for identity in identities:
            agent = _agent(location, identity)
            mine = [rid for rid in recorded if rid == agent or rid.startswith(agent + ".")]
            mine += _declared_ids(location, agent)
            if not mine:
                _check_known(location, identity, report)
            for rid in sorted(set(mine)):
                holds.hold(scope, rid)
                selected.append(rid)
    _mark_stopped(location, selected, report)
    for rid in selected:
        try:
            record = launch_record.read(scope, rid)
        except MalformedRecord as error:
            report.errors.append(str(error))
            continue
        if record is None:
            continue
        backend = TmuxBackend(scope) if record.kind == "pty" else ExecBackend(scope, location.paths.logs)
        backend.kill(record)
        launch_record.remove(scope, rid)
        park.clear(scope, rid)
        report.stopped.append(rid)
    if not identities:
        _retire_seat_host(scope)
    return report


def report_down(location: CatalogLocation, identities: list[str], echo) -> int:
    """``st2 down [identity…]``: tear down (:func:`down`), print what stopped through ``echo`` and
    each error on stderr, and return the verb's exit status: 1 when anything failed."""
    report = down(location, identities)
    if report.supervisor_stopped:
        echo(f"stopped supervisor pid {report.supervisor_stopped}")
    for runtime_id in report.stopped:
        echo(f"stopped {runtime_id}")
    for error in report.errors:
        echo(f"st2 down: {error}", err=True)
    return 1 if report.errors else 0


def _agent(location: CatalogLocation, identity: str) -> str:
    return identity if identity.startswith(f"{location.host}.") else f"{location.host}.{identity}"


def _mark_stopped(location: CatalogLocation, runtime_ids: list[str], report: TeardownReport) -> None:
    """Leave the stop marker for each of ``runtime_ids`` before it is killed (a crash between the
    two then starts fresh, as the operator asked)."""
    from st2.runtime import resumable_session

    store = resumable_session.SessionStore.of(location.root, location.host)
    now_ms = time.time_ns() // 1_000_000
    for rid in runtime_ids:
        try:
            resumable_session.mark_stopped(store, rid, now_ms)
        except OSError as error:
            report.errors.append(f"cannot record that {rid} was stopped (its next launch would resume): {error}")


RETIRE_WAIT_SECONDS = 5.0


def _retire_seat_host(scope: RuntimeScope) -> None:
    """Whole-host teardown ends the scope's DING service and seat host too (nothing is left for
    them to serve), in that order, each waited for (bounded) until its process is gone: a DING
    service still winding down could otherwise start a new seat host after the old one retired,
    and a caller that sweeps processes right after `st2 down` (`st2 eval`) would find one still
    exiting."""
    from st2.ding import service_wire
    from st2.seathost import wire

    for socket in (service_wire.socket_path(scope.directory), wire.socket_path(scope.directory)):
        try:
            pid = wire.request(socket, {"op": "hello"}, timeout=2.0).get("pid")
            wire.request(socket, {"op": "retire"}, timeout=2.0)
        except OSError:
            continue   # none answers: nothing to wait for
        if isinstance(pid, int) and not isinstance(pid, bool):
            _wait_gone(pid)


def _wait_gone(pid: int) -> None:
    """Until the process ``pid`` is gone (a zombie counts), at most :data:`RETIRE_WAIT_SECONDS`."""
    from st2.process.identity import observe

    deadline = time.monotonic() + RETIRE_WAIT_SECONDS
    while observe(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.02)


def _declared_ids(location: CatalogLocation, agent: str) -> list[str]:
    from st2.supervisor.catalog_view import read_catalog

    plan = read_catalog(location).plan(agent)
    return [task.runtime_id for task in plan.tasks] if plan else []


def _check_known(location: CatalogLocation, identity: str, report: TeardownReport) -> None:
    if not _declared_ids(location, _agent(location, identity)):
        report.errors.append(f"no task of {identity!r} is declared or recorded on {location.host}")


def _stop_supervisor(scope: RuntimeScope, report: TeardownReport) -> None:
    identity = supervisor_record.running(scope)
    if identity is None or identity.pid == os.getpid():
        return
    try:
        os.kill(identity.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + SUPERVISOR_STOP_SECONDS
    while liveness(identity) == Liveness.ALIVE and time.monotonic() < deadline:
        time.sleep(0.05)
    if liveness(identity) == Liveness.ALIVE:
        report.errors.append(f"supervisor pid {identity.pid} did not stop within {SUPERVISOR_STOP_SECONDS:g}s")
    else:
        report.supervisor_stopped = identity.pid
