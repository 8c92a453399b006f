"""``st2 down [identity…]``: the only command that kills tasks (parsing glue over
:func:`st2.supervisor.teardown.report_down`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("down")
@click.argument("identities", nargs=-1)
@catalog_options
def down(identities: tuple[str, ...], location) -> None:
    """Kill tasks (tmux server / whole process group) and forget their records.

    With no identity: stop this host's supervisor of the catalog, then every task. With
    identities: only those seats' tasks, held until the next `st2 up`. Idempotent."""
    from st2.supervisor.teardown import report_down

    exit_with(report_down(location, list(identities), click.echo))
