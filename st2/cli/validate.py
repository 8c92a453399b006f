"""`st2 validate [--strict] [--json]`: every problem in the catalog, one diagnostic each (parsing
glue over :func:`st2.authoring.validation.report`).

Human form, one line per problem: ``file:line:column: severity[code]: message`` (plus an indented
``help:`` line when there is advice); a summary goes to stderr. ``--json`` prints one JSON array of
``st2.agent-spec-diagnostic.v1`` objects (``[]`` when clean). Exits 1 when any error remains;
``--strict`` promotes warnings to errors first.
"""

from __future__ import annotations

import click

from st2.cli.common import catalog_options, exit_with


@click.command("validate")
@click.option("--strict", is_flag=True, help="Treat every warning as an error.")
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as a JSON array.")
@catalog_options(must_exist=False)
def validate(strict: bool, as_json: bool, location) -> None:
    """Check the catalog's layout and declarations without changing anything."""
    from st2.authoring.validation import report

    exit_with(report(location.root, location.host, strict, as_json, click.echo))
