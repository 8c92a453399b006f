"""`st2 ls [--json]`: the seats discovery finds, sorted by host and identity.

Human form: one line per seat, ``<host>.<identity>  agents/<host>/<identity>/agent.kdl``.
``--json``: ``[{"id":…,"host":…,"identity":…,"declaration":…}]`` (``[]`` for none). Discovery
problems go to stderr and make the exit status 1, since the listing is then incomplete.
"""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("ls")
@click.option("--json", "as_json", is_flag=True, help="Print the seats as a JSON array.")
@catalog_options
def ls(as_json: bool, location) -> None:
    """List the seats declared in the catalog."""
    from st2.catalog.discovery import discover

    found = discover(location.root)
    rows = [{"id": seat.runtime_id, "host": seat.host, "identity": seat.identity,
             "declaration": f"agents/{seat.host}/{seat.identity}/agent.kdl"} for seat in found.seats]
    if as_json:
        import json

        click.echo(json.dumps(rows, ensure_ascii=False, separators=(",", ":")))
    else:
        width = max((len(row["id"]) for row in rows), default=0)
        for row in rows:
            click.echo(f"{row['id']:<{width}}  {row['declaration']}")
    for diagnostic in found.diagnostics:
        click.echo(diagnostic.human(), err=True)
    exit_with(1 if found.errors else 0)
