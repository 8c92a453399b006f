"""`st2 eval [--json] [--keep] [--host H] PATH`: run an eval spec (parsing glue over :mod:`st2.eval.run`).

Exit 0 when the verdict passes, 1 when it fails, 2 when the spec is refused (each problem one
``file:line:column`` line on stderr; ``--json``: one ``st2.agent-spec-diagnostic.v1`` object per
line), 130 when interrupted (the team is torn down first)."""

from __future__ import annotations

import json
from pathlib import Path

import click

SPEC_REFUSED_EXIT = 2
INTERRUPTED_EXIT = 130


@click.command("eval")
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as one st2.eval-verdict.v1 object.")
@click.option("--keep", is_flag=True, help="Keep the eval's temp catalog and state (its path is printed).")
@click.option("--host", "host_option", default=None, help="Run the team as this host (default: the spec's `host`, else eval).")
@click.pass_context
def eval_command(context: click.Context, target: Path, as_json: bool, keep: bool, host_option: str | None) -> None:
    """Run the eval spec TARGET (a .kdl file, or a folder holding exactly one) and print its verdict."""
    from st2.declarations.diagnostics import ERROR
    from st2.eval.run import Eval
    from st2.eval.spec import find_spec, load_spec

    try:
        path = find_spec(target)
    except ValueError as error:
        click.echo(f"st2 eval: {error}", err=True)
        context.exit(SPEC_REFUSED_EXIT)
    spec, diagnostics = load_spec(path)
    for diagnostic in diagnostics:
        click.echo(json.dumps(diagnostic.wire()) if as_json else diagnostic.human(), err=True)
    if spec is None or any(diagnostic.severity == ERROR for diagnostic in diagnostics):
        context.exit(SPEC_REFUSED_EXIT)
    host = host_option or (context.find_root().obj or {}).get("host")
    if host:
        from st2.catalog.names import refusal

        problem = refusal(host, "host")
        if problem:
            click.echo(f"st2 eval: {problem}", err=True)
            context.exit(SPEC_REFUSED_EXIT)
        spec.host = host
    verdict = Eval(spec, keep=keep).run()
    if as_json:
        click.echo(json.dumps(verdict.wire(), separators=(",", ":")))
    else:
        for line in verdict.lines():
            click.echo(line)
    context.exit(INTERRUPTED_EXIT if verdict.interrupted else (0 if verdict.passed else 1))
