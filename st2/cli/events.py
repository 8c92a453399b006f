"""``st2 events [--follow] [--since MS] [--host H] [--json]``: the fleet's typed transitions
(parsing glue; the journal is :mod:`st2.events.journal`, the follower its :class:`Follower`).

The journal read is this host's (``st2 --host`` or the short hostname): each host's supervisor
journals what it observes of the whole catalog. ``--host H`` keeps the seats of host H (the
fleet-wide usage events are kept too)."""

from __future__ import annotations

import sys

import click

from st2.cli.common import exit_with


@click.command("events")
@click.option("--follow", is_flag=True, help="Keep printing events as the supervisor journals them.")
@click.option("--since", "since_ms", type=int, default=None, metavar="MS",
              help="Only events observed at or after this unix time in milliseconds.")
@click.option("--host", "seat_host", default=None, metavar="H", help="Only events of seats of host H.")
@click.option("--json", "as_json", is_flag=True, help="One st2.fleet-event.v1 JSON line per event.")
@click.option("--catalog", "catalog_option", default=None, help="Catalog root (default $CATALOG, then the XDG state default).")
def events(follow: bool, since_ms: int | None, seat_host: str | None, as_json: bool, catalog_option: str | None) -> None:
    """Typed transitions of the fleet: blocked on a human, parked or crash-looping tasks, context
    past its advisory threshold, compactions, usage PAUSE/STALE, driver diagnostics, stale records.

    Without --follow, print what the journal holds (since --since); with no journal, only what
    the current records prove."""
    from st2.catalog.location import CatalogLocation, resolve_catalog_root, resolve_host
    from st2.events import reading

    context = click.get_current_context()
    root_obj = context.find_root().obj or {}
    location = CatalogLocation(root=resolve_catalog_root(catalog_option or root_obj.get("catalog")),
                               host=resolve_host(root_obj.get("host")))
    if not location.root.is_dir():
        click.echo(f"st2 events: no catalog at {location.root} (pass --catalog or set $CATALOG; `st2 demo` builds one)",
                   err=True)
        exit_with(1)
    if since_ms is not None and since_ms < 0:
        raise click.BadParameter("must be a unix time in milliseconds", param_hint="--since")
    show = reading.printer(as_json, seat_host, since_ms, sys.stdout)
    try:
        if follow:
            status = reading.follow(location, show, since_ms, sys.stderr)
        else:
            from st2.supervisor.park import believed

            status = reading.print_once(location, show, sys.stderr, park_reader=believed)
    except BrokenPipeError:
        status = 0
    exit_with(status)
