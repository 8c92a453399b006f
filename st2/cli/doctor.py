"""`st2 doctor`: print advisories and failures; exit non-zero only on a failure (parsing glue over
:func:`st2.doctor.run.report`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("doctor")
@catalog_options(must_exist=False)
def doctor(location) -> None:
    """Check the catalog, its records and its tasks. Advisories never change the exit status."""
    from st2.base.clock import command_clock
    from st2.doctor.run import report

    exit_with(report(location.root, location.host, command_clock().wall_ms(), click.echo))
