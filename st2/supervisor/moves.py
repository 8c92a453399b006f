"""Moving a running seat to the account its plan names (docs/accounts.md §Moving a seat between
accounts): the supervisor's side of :mod:`st2.accounts.placement`.

A running agent task whose launch record names another account than its plan's is due to move
at an idle boundary only (:func:`st2.accounts.placement.move_step`); until then `st2 up` says once
that it will. Once the task is stopped, its recorded conversation is carried to the new config
location where the lab proved the harness can resume it there, else recorded lost with a line
naming the session (:func:`st2.accounts.placement.carry_or_lose`).
"""

from __future__ import annotations

from pathlib import Path


class Mover:
    """One per supervisor: which tasks were told they move at their next idle boundary."""

    def __init__(self, location, scope, clock, say) -> None:
        self.location = location
        self.scope = scope
        self.clock = clock
        self.say = say
        self.waiting: set[str] = set()

    @staticmethod
    def harness(plan) -> str | None:
        return next(iter(plan.declaration.drivers), None) if plan.declaration is not None else None

    def due(self, task, plan, record) -> bool:
        """Whether ``task`` (running under ``record`` on another account than ``plan``'s) moves now."""
        from st2.accounts.placement import Move, move_step

        step = move_step(plan.account, record.account, Path(plan.declaration_path).parent, self.harness(plan),
                         plan.agent, self.clock.wall_ms())
        if step is Move.WAIT:
            if task.runtime_id not in self.waiting:
                self.say(f"{task.runtime_id} moves from account {record.account or '(host)'} to "
                         f"{plan.account or '(host)'} at its next idle boundary")
                self.waiting.add(task.runtime_id)
            return False
        self.waiting.discard(task.runtime_id)
        return True

    def moved(self, task, plan, record, accounts: dict) -> str | None:
        """After the stop: carry the session or record it lost. Return the loud line naming a lost
        session, or None."""
        from st2.accounts.placement import carry_or_lose
        from st2.accounts.scope import seat_environment
        from st2.runtime.resumable_session import SessionStore

        self.say(f"moving {task.runtime_id}[{record.pid}] from account {record.account or '(host)'} to "
                 f"{plan.account or '(host)'}")
        seat_directory = Path(plan.declaration_path).parent
        new_environment = dict(task.environment)
        old_environment = dict(new_environment)
        if plan.account in accounts:
            for name in seat_environment(accounts[plan.account], self.location.root):
                old_environment.pop(name, None)
        if record.account in accounts:
            old_environment.update(seat_environment(accounts[record.account], self.location.root))
        lost = carry_or_lose(SessionStore.beside(self.scope.directory), task.runtime_id, plan.agent, self.harness(plan),
                             task.directory or str(seat_directory), old_environment, new_environment,
                             seat_directory, self.clock)
        if lost is not None:
            self.say(lost)
        return lost
