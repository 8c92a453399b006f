"""`st2 ding <runtime-id>` / `st2 ding --identity NAME` — parsing glue over
:func:`st2.ding.serve.serve`: the DING notifier of one PTY seat (the supervisor runs it as the
derived ``<host>.<identity>.ding`` task)."""

from __future__ import annotations

import click

from st2.cli.common import CatalogLocation, catalog_options


@click.command("ding")
@click.argument("runtime_id", required=False)
@click.option("--identity", default=None, help="The seat's identity on this host (instead of RUNTIME_ID).")
@click.option("--socket", default=None, hidden=True, help="The target tmux socket (default: the seat's own).")
@click.option("--poll-interval", type=float, default=1.0, show_default=True,
              help="Fallback poll and liveness cadence, seconds.")
@click.option("--retry-backoff", type=float, default=15.0, show_default=True,
              help="Backoff before a held notice is inspected again, seconds.")
@click.option("--trace-progress", is_flag=True, hidden=True, envvar="ST2_DING_TRACE_PROGRESS",
              help="Log one progress line (passes, attempts, wake-ups) per loop pass.")
@catalog_options
def ding(runtime_id: str | None, identity: str | None, socket: str | None, poll_interval: float,
         retry_backoff: float, trace_progress: bool, location: CatalogLocation) -> int:
    """Deliver one notice per unread message into a seat's terminal, exactly once."""
    from st2.ding.notifier import Settings
    from st2.ding.route import core
    from st2.ding.serve import TargetError

    if (runtime_id is None) == (identity is None):
        raise click.UsageError("give exactly one of RUNTIME_ID or --identity")
    target = runtime_id or f"{location.host}.{identity}"
    settings = Settings(poll_interval=poll_interval, retry_backoff=retry_backoff, trace_progress=trace_progress)
    try:
        return core(location.root, location.host, target, socket, settings)
    except TargetError as error:
        raise click.ClickException(str(error)) from error
