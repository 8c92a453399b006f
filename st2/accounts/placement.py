"""Which account a seat runs on, and when a running seat moves to it (docs/accounts.md).

- :func:`effective_accounts`: each declared account's stand-in this pass — itself, or its declared
  ``failover`` while its own verdict is a fresh PAUSE and the failover's is not. A seat is lowered
  onto the stand-in of the account it declares (:func:`st2.supervisor.lowering.lower`).
- :func:`move_step`: a running agent task whose launch record names another account than its
  plan's is moved — at an idle boundary only. A harness seat moves when its observed state is
  ``ready`` or ``idle`` and nobody's answer is awaited; anything else (a turn under way, a dialog,
  an unknown or absent reading) waits for the next pass. A plain seat (no driver) has no turns
  and moves at once.
- :func:`carry_or_lose`: before the relaunch, the seat's recorded harness session is carried to
  the new config location where the lab proved the harness can resume it there
  (:mod:`st2.accounts.carry`); otherwise the session is recorded lost (never resumed again), the
  ``resume`` driver-diagnostic is published, and the returned line says the seat starts fresh.
"""

from __future__ import annotations

import enum

from st2.accounts import budget
from st2.delivery.budget import judge_record


class Move(enum.Enum):
    NONE = "none"      # the running generation is on the plan's account (or nothing runs)
    WAIT = "wait"      # it is not, and the seat is not at an idle boundary yet
    NOW = "now"        # it is not, and the seat is at an idle boundary: stop and relaunch


def effective_accounts(accounts: dict, catalog_root, now_s: int, environ=None) -> dict[str, str]:
    """Account name -> the account its seats run on this pass."""
    effective = {name: name for name in accounts}
    paused: dict[str, bool] = {}

    def is_paused(name: str) -> bool:
        if name not in paused:
            record = budget.resolved_record(accounts[name], catalog_root, environ)
            paused[name] = record is not None and judge_record(record, now_s) is not None
        return paused[name]

    for name, account in accounts.items():
        if account.failover is not None and account.failover in accounts and is_paused(name) \
                and not is_paused(account.failover):
            effective[name] = account.failover
    return effective


IDLE_STATES = ("ready", "idle")


def move_step(plan_account: str | None, running_account: str | None, seat_directory, harness: str | None,
              agent: str, now_ms: int) -> Move:
    """Whether the running agent task moves now (see the module docstring)."""
    if plan_account == running_account:
        return Move.NONE
    if harness is None:
        return Move.NOW
    from st2.catalog.layout import HARNESS_STATE
    from st2.records import harness_state

    observed = harness_state.read_file(seat_directory / HARNESS_STATE, now_ms, agent=agent)
    if observed is None or observed.state not in IDLE_STATES or observed.blocked_on_human:
        return Move.WAIT
    return Move.NOW


def carry_or_lose(store, runtime_id: str, agent: str, harness: str | None, cwd: str,
                  old_environment: dict, new_environment: dict, seat_directory, clock) -> str | None:
    """Carry the seat's recorded session across the move, or record it lost. Return None when
    nothing is lost (carried, or no session recorded), else the loud line naming the lost session."""
    from st2.runtime import resumable_session as records
    from st2.runtime.resume import lose, publish_lost

    if harness is None:
        return None
    record = records.read(store, runtime_id, agent)
    if record is None or record.session_id is None or record.session_id in record.lost_ids():
        return None
    from st2.accounts.carry import carry

    reason = carry(harness, record.session_id, cwd, old_environment, new_environment)
    if reason is None or not lose(store, runtime_id, agent, record.session_id, clock):
        return None
    publish_lost(seat_directory, harness, clock)
    return (f"{agent}: its {harness} session {record.session_id} cannot follow it to the new account ({reason}); "
            "the session is lost and the seat starts fresh")
