"""What the view's keys do, each through the verb's own core: the bus's send as the declared
operator principal, :func:`st2.supervisor.unpark.unpark`, the authoring path's
:func:`st2.authoring.desired_state.set_desired_state`, `st2 attach`'s argv, and the detail
pane's read-only facts (doctor lines, last messages, driver diagnostic, record ages). Each
returns a one-line outcome for the status bar and never raises for a refusal."""

from __future__ import annotations

import os
import sys

from st2.bus import BusError
from st2.catalog import layout
from st2.catalog.location import CatalogLocation
from st2.declarations.diagnostics import one_line
from st2.records import driver_diagnostic
from st2.roster.human import worktree_text
from st2.top.model import SeatView, task_trouble

RECORDS = (layout.STATUS, layout.HARNESS_STATE, layout.HARNESS_CONTEXT, layout.DRIVER_DIAGNOSTIC)
LAST_MESSAGES = 5


def send_message(location: CatalogLocation, seat: SeatView, body: str, subject: str | None = None) -> str:
    """Send ``body`` to the seat as this host's declared operator principal."""
    from st2.bus.addressing import resolve_seat
    from st2.bus.principals import operator_principal
    from st2.bus.send import send

    if not body.strip():
        return "not sent: the message is empty"
    try:
        operator = operator_principal(location.root, location.host)
        if operator is None:
            return (f"not sent: no operator principal on {location.host} "
                    f"(declare principals/{location.host}/operator/principal.kdl)")
        recipient = resolve_seat(location.root, seat.identity)
        receipt = send(location.root, recipient, sender=operator.bus_id, body=body, subject=subject or None)
    except (BusError, OSError) as error:
        return f"not sent: {error}"
    return f"sent {receipt.filename} to {receipt.recipient} as {operator.bus_id}"


def unpark_tasks(location: CatalogLocation, seat: SeatView) -> str:
    """Unpark every parked task of the seat through the real unpark path."""
    from st2.supervisor.unpark import unpark

    parked = [task["runtimeId"] for task in seat.tasks if task_trouble(task) in ("parked", "crash-loop")]
    if not parked:
        return f"{seat.identity} has no parked task"
    return "; ".join(unpark(location, runtime_id)[1] for runtime_id in parked)


def set_desired(location: CatalogLocation, seat: SeatView, words: str) -> str:
    """``<state> [reason…]`` through the authoring path (the same refusals as `st2 agent desired-state`)."""
    from st2.authoring.desired_state import DesiredStateRefused, set_desired_state

    state, _, reason = words.strip().partition(" ")
    try:
        receipt = set_desired_state(location, seat.identity, state, reason.strip() or None)
    except DesiredStateRefused as refusal:
        return f"refused: {refusal}"
    return receipt.line()


def attach_argv(location: CatalogLocation, seat: SeatView) -> list[str]:
    """`st2 attach` for the seat, in this interpreter, naming the exact catalog and host."""
    return [sys.executable, "-m", "st2", "attach", "--catalog", str(location.root),
            "--host", location.host, seat.identity]


def _age(path: str, now_ms: int) -> str:
    try:
        mtime_ms = os.stat(path, follow_symlinks=False).st_mtime_ns // 1_000_000
    except OSError:
        return "absent"
    seconds = max(0, (now_ms - mtime_ms) // 1000)
    return f"{seconds}s"


def detail_lines(location: CatalogLocation, seat: SeatView, now_ms: int) -> list[str]:
    """The detail pane: identity and declaration, record ages, the resumable session, the worktree,
    driver diagnostic, tasks, the last messages (inbox and archive, newest first) and the seat's
    doctor findings."""
    from st2.bus.mailbox import archive_of, inbox_of, list_box
    from st2.doctor.run import run_doctor

    row = seat.row
    directory = layout.SeatPaths(location.root, row.host, row.bare_identity).directory
    lines = [f"{row.identity}  {row.name or ''}".rstrip(), f"desired {row.desired_state}"
             + (f" ({one_line(row.desired_state_reason)})" if row.desired_state_reason else "")]
    lines += hold_lines(row)
    lines += ["", "record ages:"]
    lines += [f"  {name:18} {_age(os.path.join(directory, name), now_ms)}" for name in RECORDS]
    lines += ["", "session: " + session_text(row.session)]
    lines += ["worktree: " + worktree_text(row.worktree)]
    lines += [resource_text(state, now_ms) for state in row.resource_states]
    lines += schedule_lines(location, row)
    diagnostic = driver_diagnostic.to_wire(row.driver_diagnostic)  # printed under its wire names
    lines += ["", "driver diagnostic: " + (" ".join(f"{key}={value}" for key, value in diagnostic.items()
                                                   if value is not None) or "none")]
    lines += ["", "tasks:"] + ([f"  {task['runtimeId']} {task['runtime']['state']}"
                                + (f" parked: {task['parked']['reason']}" if task.get("parked") else "")
                                for task in seat.tasks] or ["  none on this host"])
    messages = []
    try:
        for box, where in ((inbox_of(directory), "inbox"), (archive_of(directory), "archive")):
            messages += [(message.ts, where, message) for message in list_box(box)]
    except (BusError, OSError) as error:
        lines.append(f"messages unreadable: {error}")
    messages.sort(key=lambda item: item[0], reverse=True)
    lines += ["", "last messages:"] + ([f"  {where:7} {message.filename} from {message.sender or '?'}: {summary(message)}"
                                        for _, where, message in messages[:LAST_MESSAGES]] or ["  none"])
    try:
        findings = [finding.line() for finding in run_doctor(location.root, location.host, now_ms)
                    if finding.subject == row.identity or finding.subject.startswith(row.identity + ".")]
    except OSError as error:
        findings = [f"doctor could not run: {error}"]
    lines += ["", "doctor:"] + ([f"  {line}" for line in findings] or ["  no findings"])
    return lines


def hold_lines(row) -> list[str]:
    """The seat's delivery holds: a fresh dnd, and its account's budget hold with the window and
    the local time it resets (``delivery held: budget (account main, 5h window, until 08:30)``)."""
    from datetime import datetime

    lines = ["delivery held: dnd"] if row.delivery_hold == "dnd" else []
    hold = row.budget_hold
    if hold is not None:
        try:
            until = datetime.fromtimestamp(hold.until_ms / 1000).strftime("%H:%M")
        except (OverflowError, OSError, ValueError):
            until = f"{hold.until_ms}ms"
        lines.append(f"delivery held: budget (account {hold.account}, {hold.axis} window, until {until})")
    return lines


def resource_text(state, now_ms: int) -> str:
    """The detail pane's line for one resource binding's state record
    (:class:`st2.resources.state.State`)."""
    observed = ("never observed" if state.host_observed_at_ms is None
                else f"observed {max(0, now_ms - state.host_observed_at_ms) // 1000}s ago")
    failure = state.last_failure
    verdict = "ok" if failure is None else f"failing ({failure.kind}: {one_line(failure.message)})"
    return (f"resource {state.binding}: revision {state.revision} generation {state.generation} {observed}, "
            f"{verdict}")


def schedule_lines(location: CatalogLocation, row) -> list[str]:
    """``schedules:`` and one line per declared schedule with its next run (this host's seats;
    :func:`st2.schedule.state.next_run_text`), or nothing for a seat without schedules."""
    if row.host != location.host:
        return []
    from st2.declarations import load_agent
    from st2.runtime.resumable_session import SessionStore
    from st2.schedule import state

    directory = layout.SeatPaths(location.root, row.host, row.bare_identity).directory
    declaration, _ = load_agent(os.path.join(directory, "agent.kdl"))
    if declaration is None or not declaration.schedules:
        return []
    recorded = state.read(SessionStore.of(location.root, location.host), row.identity) or {}
    return ["schedules:"] + [f"  {state.next_run_text(schedule, recorded.get(schedule.name))}"
                             for schedule in declaration.schedules]


def session_text(session) -> str:
    """The detail pane's session line from the seat's resumable-session record
    (:class:`st2.runtime.resumable_session.SessionRecord`, or None): how the current harness
    session began — ``fresh``, ``resuming``, ``resumed`` or ``fallback`` — its id, and the ids a
    resume lost."""
    if session is None:
        return "no resumable-session record on this host"
    text = f"{session.start} {session.session_id or '(id not yet observed)'}"
    lost = [entry.session_id for entry in session.lost]
    return text + (f" (lost: {', '.join(lost)})" if lost else "")


def summary(message) -> str:
    """A message's subject, else the first line of its body."""
    if message.subject:
        return message.subject
    body = message.body.strip()
    return body.splitlines()[0] if body else ""
