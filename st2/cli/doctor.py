"""`st2 doctor`: print advisories and failures; exit non-zero only on a failure."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with
from st2.base.clock import command_clock


@click.command("doctor")
@catalog_options(must_exist=False)
def doctor(location) -> None:
    """Check the catalog, its records and its tasks. Advisories never change the exit status."""
    from st2.doctor.findings import exit_status
    from st2.doctor.run import run_doctor

    findings = run_doctor(location.root, location.host, command_clock().wall_ms())
    for finding in findings:
        click.echo(finding.line())
    if not findings:
        click.echo(f"ok: {location.root}: no findings")
    exit_with(exit_status(findings))
