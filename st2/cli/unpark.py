"""``st2 unpark <runtime-id>``: recover exactly one parked task."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("unpark")
@click.argument("runtime_id")
@catalog_options
def unpark(runtime_id: str, location) -> None:
    """Clear one task's park and spent restart budget; the running supervisor relaunches it."""
    from st2.supervisor.unpark import unpark as recover

    status, message = recover(location, runtime_id)
    click.echo(message, err=status != 0)
    exit_with(status)
