"""``st2 up``: run the supervisor (parsing glue over :func:`st2.supervisor.loop.up`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with
from st2.supervisor.interval import DEFAULT_INTERVAL, MAX_INTERVAL


@click.command("up")
@click.option("--once", is_flag=True, help="Run one reconcile pass and exit (non-zero on errors).")
@click.option("--interval", default=DEFAULT_INTERVAL, show_default=True,
              help=f"Fallback timer between passes (at most {MAX_INTERVAL}).")
@click.option("--agent", default=None, help="Reconcile only this seat (identity or <host>.<identity>).")
@click.option("--task", "task", default=None, help="Reconcile only this runtime id.")
@click.option("--materialize-only", is_flag=True, help="Apply render blocks, launch nothing, exit.")
@click.option("--resume", "resume", is_flag=True,
              help="Resume the recorded harness sessions of seats `st2 down` stopped (default: they start fresh).")
@catalog_options(must_exist=False)
def up(once: bool, interval: str, agent: str | None, task: str | None, materialize_only: bool, resume: bool,
       location) -> None:
    """Keep exactly the declared seats of this host running (one supervisor per catalog and host).

    Stopping or killing `st2 up` never stops a task; only `st2 down` does."""
    if agent and task:
        raise click.UsageError("--agent and --task are exclusive")
    from st2.supervisor.interval import IntervalRefused, interval_seconds
    from st2.supervisor.loop import up as supervise

    try:
        seconds = interval_seconds(interval)
    except IntervalRefused as refusal:
        raise click.BadParameter(str(refusal)) from None
    exit_with(supervise(location, once=once, interval=seconds, agent=agent, task=task,
                        materialize_only=materialize_only, resume=resume))
