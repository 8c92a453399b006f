"""``st2 up``: run the supervisor (parsing glue; the loop is :mod:`st2.supervisor.loop`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


MAX_INTERVAL = "1d"  # a fallback timer; the loop's waits (epoll) cannot take much past 24 days


def _interval(value: str) -> float:
    from st2.declarations.durations import DurationRefused, parse_duration

    try:
        seconds = parse_duration(value, maximum=MAX_INTERVAL)
    except DurationRefused as refusal:
        raise click.BadParameter(f"{refusal} (e.g. 30s, 5m)") from None
    if seconds <= 0:
        raise click.BadParameter(f"{value!r} is not a positive duration (e.g. 30s, 5m)")
    return seconds


@click.command("up")
@click.option("--once", is_flag=True, help="Run one reconcile pass and exit (non-zero on errors).")
@click.option("--interval", default="30s", show_default=True,
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
    from st2.base.clock import command_clock
    from st2.supervisor.loop import run
    from st2.supervisor.reconcile import Selection

    if resume:
        from st2.supervisor.resume_request import resume_stopped

        resume_stopped(location, agent=agent, task=task)
    # The archive step's grace period reads the command clock, which ST2_CLOCK_WALL_MS pins for
    # the process tests (seven days are not slept out).
    status = run(location, once=once, interval=_interval(interval), selection=Selection(agent=agent, task=task),
                 materialize_only=materialize_only, archive_clock=command_clock())
    exit_with(status)
