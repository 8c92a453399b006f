"""`st2 validate [--strict] [--json]`: every problem in the catalog, one diagnostic each.

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
    from st2.authoring.validation import validate_catalog

    diagnostics = validate_catalog(location.root, location.host, strict=strict)
    if as_json:
        import json

        click.echo(json.dumps([diagnostic.wire() for diagnostic in diagnostics], ensure_ascii=False,
                              separators=(",", ":")))
    else:
        for diagnostic in diagnostics:
            click.echo(diagnostic.human())
        errors = sum(1 for diagnostic in diagnostics if diagnostic.severity == "error")
        warnings = len(diagnostics) - errors
        click.echo(f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}",
                   err=True)
    exit_with(1 if any(diagnostic.severity == "error" for diagnostic in diagnostics) else 0)
