"""``st2 top [--once] [--host H] [--harness N] [--state S] [--text T] [--sort COLUMN]``."""

from __future__ import annotations

import sys

import click

from st2.cli.common import catalog_options
from st2.base.clock import command_clock

SORTS = ["host", "agent", "presence", "desired", "observed", "context", "inbox", "oldest", "tasks"]


@click.command("top")
@click.option("--once", is_flag=True, help="Print one plain frame and exit (automatic when stdout is not a terminal).")
@click.option("--host-filter", "host_filter", default=None, metavar="HOST", help="Only seats of this host.")
@click.option("--harness", default=None, help="Only seats of this harness.")
@click.option("--state", default=None, help="Only seats in this observed state, presence, desired state, or `blocked`.")
@click.option("--text", default="", help="Only seats whose row contains this text.")
@click.option("--sort", type=click.Choice(SORTS), default=None, help="Sort by this column (default: blocked on a human first).")
@catalog_options
def top(once: bool, host_filter: str | None, harness: str | None, state: str | None, text: str,
        sort: str | None, location) -> None:
    """A live fleet view: seats, tasks, the usage windows and the recent fleet events, refreshed
    as records change."""
    from st2.runtime.declaration_cache import DeclarationCache
    from st2.top.model import Filters, Fleet
    from st2.top.usage_view import read_usage

    cache = DeclarationCache.open(location.root)  # as `st2 agents` reads the declarations
    filters = Filters(host=host_filter, harness=harness, state=state, text=text)
    if once or not sys.stdout.isatty():
        from st2.top.events_view import RecentEvents
        from st2.top.plain import frame

        clock = command_clock()
        fleet = Fleet(location, cache=cache)
        fleet.load(clock.wall_ms())
        events = RecentEvents(location)
        events.load()
        click.echo(frame(fleet, read_usage(now=clock.wall_ms() // 1000, catalog_root=location.root), clock.wall_ms(), filters, sort, events=events))
        return
    from st2.top.app import TopApp

    TopApp(location, filters=filters, sort=sort, clock=command_clock(), cache=cache).run()
