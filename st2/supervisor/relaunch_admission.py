"""The pass's side of relaunch admission (:mod:`st2.accounts.admission`): which launches ask.

Only a seat's canonical agent task on a declared account is asked; its companions (DING, streams)
follow the agent, and seats without an account are never queued. An operator's explicit start (a
seat selected alone, ``st2 up --agent X``, or a task just unparked) goes to the head of its
account's queue; it still waits out the spacing since the account's last start.

A storm is drained inside the pass that queued it (:func:`drain_queue`): for up to
:data:`DRAIN_SECONDS` the pass waits for each account's next slot and launches the seats whose
slot has come, observing only them. Otherwise every start would cost a whole pass — every
declaration read and every running task observed — and a 627-seat storm would spend its time in
passes rather than in the spacing (benchmarks/relaunch.py). A queued stop ends the drain early;
the seats still queued wait for the next pass, which also starts the drained seats' companions.
"""

from __future__ import annotations

from st2.supervisor.lowering import SeatPlan, Task, TaskRole

DRAIN_SECONDS = 10.0


def admitted(admission, accounts: dict, plan: SeatPlan, task: Task, explicit: bool, report) -> bool:
    """May ``task`` launch in this pass? A task waiting is added to ``report.queued`` (the pass's
    end wakes the loop at its account's next slot); a start that cannot be recorded is not made
    and is said in ``report.errors``."""
    account = accounts.get(plan.account) if plan.account is not None else None
    if task.role is not TaskRole.AGENT or account is None:
        return True
    try:
        decision = admission.admit(account, task.runtime_id, explicit=explicit)
    except OSError as error:
        report.errors.append(f"{task.runtime_id}: not launched: its start on account {account.name} "
                             f"cannot be recorded: {error}")
        return False
    if not decision.admitted:
        report.queued.append(task.runtime_id)
    return decision.admitted


def drain_queue(reconciler, report) -> None:
    """Launch the pass's queued agent tasks as their slots come, for at most the reconciler's
    ``drain_seconds`` (see the module docstring)."""
    clock, admission = reconciler.clock, reconciler.admission
    until = clock.monotonic() + reconciler.drain_seconds
    waiting = reconciler.queued_tasks
    while waiting and reconciler.drain_seconds > 0 and not reconciler.interrupted():
        slot = admission.next_slot()
        if slot is None or slot > until:
            return
        clock.sleep(max(0.0, slot - clock.monotonic()))
        asked = [runtime_id for runtime_id in admission.ready() if runtime_id in waiting]
        if not asked:
            return   # the slot belongs to a seat this pass did not queue: the next pass asks for it
        for runtime_id in asked:
            task, plan = waiting.pop(runtime_id)
            report.queued.remove(runtime_id)
            reconciler._keep_running(task, plan, True, report)   # queued again when another took the slot
