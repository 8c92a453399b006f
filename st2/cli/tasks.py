"""``st2 tasks [--json]``: the read-only task inventory (parsing glue over
:func:`st2.supervisor.inventory.report`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print the st2.task-inventory.v1 envelope.")
@catalog_options(must_exist=False)
def tasks(as_json: bool, location) -> None:
    """List every declared task of this host with its runtime state. Exits non-zero when any
    evidence is incomplete."""
    from st2.supervisor.inventory import report

    exit_with(report(location, as_json, click.echo))
