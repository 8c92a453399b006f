"""``st2 down [identity…]``: the only command that kills tasks."""

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
    from st2.supervisor.teardown import down as teardown

    report = teardown(location, list(identities))
    if report.supervisor_stopped:
        click.echo(f"stopped supervisor pid {report.supervisor_stopped}")
    for runtime_id in report.stopped:
        click.echo(f"stopped {runtime_id}")
    for error in report.errors:
        click.echo(f"st2 down: {error}", err=True)
    exit_with(1 if report.errors else 0)
