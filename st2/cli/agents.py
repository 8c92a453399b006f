"""`st2 agents [--json] [--enrich] [--status S] [--identity HOST.IDENTITY] [--host HOST]`.

Every host's seats are listed (a replicated catalog carries them all), another host's read by
its records' own stamps. ``st2 agents --host H`` narrows the roster to H's seats (and reads them
as this host's); ``st2 --host H agents`` is host H listing every host's seats."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with, verb_host
from st2.records.status import PRESENCES

PRESENCE = list(PRESENCES)


@click.command("agents")
@click.option("--json", "as_json", is_flag=True, help="Print the stable JSON roster.")
@click.option("--enrich", is_flag=True, help="Add lastActivity and inbox counts.")
@click.option("--status", "status_filter", type=click.Choice(PRESENCE), default=None, help="Only seats with this presence.")
@click.option("--identity", "identity_filter", default=None, metavar="[HOST.]IDENTITY", help="Only this seat (a bare identity is on this host).")
@catalog_options
def agents(as_json: bool, enrich: bool, status_filter: str | None, identity_filter: str | None, location) -> None:
    """List the catalog's seats (every host's; --host H narrows to H's) with presence, desired
    state, observed state and context."""
    from st2.roster.verb import agents as print_roster

    status = print_roster(location.root, location.host, as_json=as_json, enrich=enrich, status_filter=status_filter,
                          identity_filter=identity_filter, host_filter=verb_host(), echo=click.echo)
    if status:
        exit_with(status)
