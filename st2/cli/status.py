"""`st2 status [identity] [--set offline|available|busy|away|dnd]` — parsing glue over
:mod:`st2.records.status`. Without ``--set`` prints the seat's effective presence; ``unknown``
is derived and can never be set."""

from __future__ import annotations

import os

import click

from st2.cli.common import CatalogLocation, catalog_options
from st2.base.clock import SYSTEM_CLOCK
from st2.records import status as status_record
from st2.records.placement import resolve_seat


def acting_identity(identity: str | None, acting: str | None) -> str:
    """The identity a verb acts on: the argument, else ``--as``, else ``$ST_AGENT``."""
    chosen = identity or acting or os.environ.get("ST_AGENT")
    if not chosen:
        raise click.UsageError("no identity given and neither --as nor $ST_AGENT is set")
    return chosen


@click.command("status")
@click.argument("identity", required=False)
@click.option("--set", "presence", metavar="STATE",
              help="Set the presence instead of printing it: offline|available|busy|away|dnd.")
@click.option("--as", "acting", default=None, help="The acting identity (default $ST_AGENT).")
@catalog_options
def command(identity: str | None, presence: str | None, acting: str | None, location: CatalogLocation) -> None:
    """Print or set an agent's declared presence."""
    name = acting_identity(identity, acting)
    try:
        seat = resolve_seat(location.root, location.host, name)
    except LookupError as error:
        raise click.ClickException(str(error)) from error
    if presence is None:
        click.echo(status_record.read_file(seat / status_record.RECORD_NAME, SYSTEM_CLOCK.wall_ms()).presence)
        return
    if presence not in status_record.SETTABLE:
        raise click.ClickException(f"invalid state '{presence}' (settable: {'|'.join(status_record.SETTABLE)})")
    status_record.write(seat, presence, SYSTEM_CLOCK)  # an OSError is the CLI's one line, exit 74
    click.echo(f"status: {presence}")
