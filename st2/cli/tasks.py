"""``st2 tasks [--json]``: the read-only task inventory."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print the st2.task-inventory.v1 envelope.")
@catalog_options(must_exist=False)
def tasks(as_json: bool, location) -> None:
    """List every declared task of this host with its runtime state. Exits non-zero when any
    evidence is incomplete."""
    from st2.supervisor.inventory import inventory, to_json

    envelope = inventory(location)
    if as_json:
        click.echo(to_json(envelope))
    else:
        for row in envelope["tasks"]:
            runtime = row["runtime"]
            pid = f" pid {runtime['pid']}" if runtime["pid"] else ""
            parked = ""
            if row["parked"] and row["parked"]["recovery"]:
                parked = "  PARKED: " + " ".join(row["parked"]["recovery"])
            elif row["parked"]:
                parked = f"  PARKED (can never start as declared: {row['parked']['reason']})"
            click.echo(f"{row['runtimeId']:40} {row['kind']:4} {runtime['state']}{pid}{parked}")
        for error in envelope["errors"]:
            click.echo(f"incomplete: {error}", err=True)
    exit_with(0 if envelope["complete"] else 1)
