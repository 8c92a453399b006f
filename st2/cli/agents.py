"""`st2 agents [--json] [--enrich] [--status S] [--identity HOST.IDENTITY] [--host HOST]`.

Every host's seats are listed (a replicated catalog carries them all), another host's read by
its records' own stamps. ``st2 agents --host H`` narrows the roster to H's seats (and reads them
as this host's); ``st2 --host H agents`` is host H listing every host's seats."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with, verb_host
from st2.clock import command_clock

PRESENCE = ["available", "busy", "away", "dnd", "offline", "unknown"]


@click.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print the stable JSON roster.")
@click.option("--enrich", is_flag=True, help="Add lastActivity and inbox counts.")
@click.option("--status", "status_filter", type=click.Choice(PRESENCE), default=None, help="Only seats with this presence.")
@click.option("--identity", "identity_filter", default=None, metavar="[HOST.]IDENTITY", help="Only this seat (a bare identity is on this host).")
@catalog_options
def agents(as_json: bool, enrich: bool, status_filter: str | None, identity_filter: str | None, location) -> None:
    """List the catalog's seats (every host's; --host H narrows to H's) with presence, desired
    state, observed state and context."""
    from st2.roster.build import build_roster
    from st2.roster.declared import DeclarationCache

    now_ms = command_clock().wall_ms()
    rows, problems = build_roster(location.root, now_ms, enrich=enrich,
                                  status_filter=status_filter, identity_filter=identity_filter,
                                  host=location.host, host_filter=verb_host(),
                                  cache=DeclarationCache.open(location.root))
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if identity_filter is not None and not rows and status_filter is None:
        click.echo(f"error: no agent {identity_filter} in {location.root}", err=True)
        exit_with(1)
    if as_json:
        from st2.roster.wire import to_json

        click.echo(to_json(rows, enrich))
    else:
        from st2.roster.human import format_rows

        click.echo(format_rows(rows, enrich=enrich, now_ms=now_ms))
