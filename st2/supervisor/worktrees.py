"""The supervisor's worktree step: before a running seat's render and launch, its worktree is
made or reused (:func:`st2.worktree.ensure.ensure`), and its reading is kept for the roster.

Per pass, :meth:`WorktreeKeeper.begin` sees every plan of this host once: which seats claim the
same branch of the same repository (each is held, naming the others) and where every seat's
worktree lies (a repository inside another seat's worktree is held). :meth:`WorktreePass.ensure`
then answers for one seat: None when its workspace is ready, else the one error line the pass
reports (the seat is not launched, not rendered into, and nothing was changed).

The worktree-state record (:mod:`st2.worktree.state`) is written when the outcome changes, and
re-read with git only when the worktree's git files changed or the reading is older than
:data:`st2.worktree.state.REFRESH_MS`: a pass over seats whose worktrees did not change runs no
git at all.
"""

from __future__ import annotations

import os
from typing import Callable

from st2.base.clock import Clock
from st2.runtime.runtime_home import catalog_digest
from st2.runtime.scope import RuntimeScope
from st2.supervisor.lowering import SeatPlan
from st2.worktree import checkout, state
from st2.worktree.ensure import HELD, Target, ensure


def st2_files(plan: SeatPlan) -> frozenset[str]:
    """The workspace-relative files st2 itself renders into the seat's workspace (its render
    block's targets, a typed driver block's included): never the seat's work."""
    declaration = plan.declaration
    if declaration is None:
        return frozenset()
    return frozenset(os.path.normpath(operation.target) for operation in declaration.render
                     if operation.operation != "git-exclude")


class WorktreePass:
    """One pass's view of every worktree this host's seats declare."""

    def __init__(self, keeper: WorktreeKeeper, plans: list[SeatPlan]) -> None:
        self.keeper = keeper
        self.paths: dict[str, str] = {}
        self.real_paths: dict[str, str] = {}
        claims: dict[tuple[str, str], list[str]] = {}
        for plan in plans:
            worktree = plan.declaration.worktree if plan.declaration is not None else None
            if worktree is None or plan.errors:
                continue
            self.paths[plan.agent] = checkout.worktree_path(worktree, plan.agent)
            self.real_paths[plan.agent] = os.path.realpath(self.paths[plan.agent])
            repository = os.path.realpath(checkout.expand(worktree.repo))
            claims.setdefault((repository, worktree.branch), []).append(plan.agent)
        self.contested = {agent: tuple(other for other in agents if other != agent)
                          for agents in claims.values() if len(agents) > 1 for agent in agents}

    def ensure(self, plan: SeatPlan) -> str | None:
        worktree = plan.declaration.worktree
        target = Target(
            runtime_id=plan.agent, repo=worktree.repo, branch=worktree.branch, base=worktree.base,
            path=self.paths[plan.agent], lock_reason=self.keeper.lock_reason(plan.agent),
            catalog=str(self.keeper.scope.catalog),
            others=tuple(path for agent, path in self.real_paths.items() if agent != plan.agent),
            contested_by=self.contested.get(plan.agent, ()))
        outcome = ensure(target)
        if outcome.created:
            self.keeper.say(f"created worktree {outcome.path} on branch {worktree.branch} for {plan.agent}")
        self.keeper.record(plan, outcome)
        if outcome.state == HELD:
            return f"{plan.agent}: worktree held, not launching: {outcome.reason}"
        return None


class WorktreeKeeper:
    """Lives as long as the supervisor: the last reading of each seat's worktree."""

    def __init__(self, scope: RuntimeScope, clock: Clock, say: Callable[[str], None]) -> None:
        self.scope = scope
        self.clock = clock
        self.say = say
        self.readings: dict[str, tuple] = {}   # runtime id -> (outcome, signature, observed at ms)
        self._digest: str | None = None

    def lock_reason(self, runtime_id: str) -> str:
        if self._digest is None:
            self._digest = catalog_digest(self.scope.catalog)
        return checkout.lock_reason(runtime_id, self._digest)

    def begin(self, plans: list[SeatPlan]) -> WorktreePass:
        return WorktreePass(self, plans)

    def record(self, plan: SeatPlan, outcome) -> None:
        """Write the seat's worktree-state record when the outcome changed, or (ready) when its
        git files changed or the reading aged past the refresh bound."""
        now_ms = self.clock.wall_ms()
        worktree = plan.declaration.worktree
        previous = self.readings.get(plan.agent)
        if outcome.state == HELD:
            if previous is not None and previous[0] == (outcome.state, outcome.reason):
                return
            reading = state.WorktreeState(plan.agent, outcome.path, worktree.branch, HELD, outcome.reason,
                                          observed_at_ms=now_ms)
            signature = None
        else:
            repository, _ = checkout.repository(worktree.repo)
            signature = state.signature(outcome.path, repository.common if repository else None)
            if (previous is not None and previous[0] == (outcome.state, None) and previous[1] == signature
                    and now_ms - previous[2] < state.REFRESH_MS):
                return
            reading = state.observe(plan.agent, outcome.path, worktree.branch, now_ms, st2_files(plan))
        try:
            state.write(self.scope.directory, reading)
        except OSError as error:
            self.say(f"cannot write the worktree-state record of {plan.agent}: {error}")
            return
        self.readings[plan.agent] = ((outcome.state, outcome.reason), signature, now_ms)
