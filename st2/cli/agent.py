"""``st2 agent …``: authoring one seat's declared intent (parsing glue)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.group("agent")
def agent() -> None:
    """Author one seat's declared intent."""


@agent.command("desired-state")
@click.argument("identity")
@click.argument("state", type=click.Choice(["running", "suspended", "retired"]))
@click.option("--reason", default=None, help="Why (required for suspended and retired, forbidden for running).")
@click.option("--managed-by", default=None, help="The owner named by the declaration's meta { managed-by }.")
@catalog_options
def desired_state(identity: str, state: str, reason: str | None, managed_by: str | None, location) -> None:
    """Set IDENTITY's desired state; suspended and retired seats have their tasks stopped."""
    from st2.supervisor.desired_state import DesiredStateRefused, set_desired_state

    try:
        receipt = set_desired_state(location, identity, state, reason, managed_by)
    except DesiredStateRefused as refusal:
        click.echo(f"st2 agent desired-state: {refusal}", err=True)
        exit_with(1)
        return
    click.echo(receipt.line())
