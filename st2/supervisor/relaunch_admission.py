"""The pass's side of relaunch admission (:mod:`st2.accounts.admission`): which launches ask.

Only a seat's canonical agent task on a declared account is asked; its companions (DING, streams)
follow the agent, and seats without an account are never queued. An operator's explicit start (a
seat selected alone, ``st2 up --agent X``, or a task just unparked) goes to the head of its
account's queue; it still waits out the spacing since the account's last start.
"""

from __future__ import annotations

from st2.supervisor.lowering import SeatPlan, Task, TaskRole


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
