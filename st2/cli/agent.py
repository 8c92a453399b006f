"""``st2 agent …``: authoring one seat's declaration (parsing glue over :mod:`st2.authoring`).

Exit status: 0 done (changed or unchanged), 1 refused (nothing was written), 3 a lost
compare-and-swap (``publish``; the current digest is printed on stdout), 2 a usage error.
"""

from __future__ import annotations

import json

import click

from st2.cli.common import catalog_options, exit_with

CAS_LOST_EXIT = 3


def _emit(value: dict) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _refuse(verb: str, refusal: Exception) -> None:
    click.echo(f"st2 agent {verb}: {refusal}", err=True)
    exit_with(1)


@click.group("agent")
def agent() -> None:
    """Author one seat's declaration."""


@agent.command("desired-state")
@click.argument("identity")
@click.argument("state", type=click.Choice(["running", "suspended", "retired"]))
@click.option("--reason", default=None, help="Why (required for suspended and retired, forbidden for running).")
@click.option("--managed-by", default=None, help="Assert the owner the declaration's meta { managed-by } names.")
@catalog_options
def desired_state(identity: str, state: str, reason: str | None, managed_by: str | None, location) -> None:
    """Set IDENTITY's desired state; suspended and retired seats have their tasks stopped."""
    from st2.authoring.desired_state import DesiredStateRefused, set_desired_state

    try:
        receipt = set_desired_state(location, identity, state, reason, managed_by)
    except DesiredStateRefused as refusal:
        _refuse("desired-state", refusal)
        return
    click.echo(receipt.line())


def _capture(verb: str, spec: str | None, bundle: str | None):
    from st2.authoring.source import SourceRefused, capture_bundle, capture_spec

    if (spec is None) == (bundle is None):
        raise click.UsageError("give exactly one of --spec FILE or --bundle DIR")
    try:
        return capture_spec(spec) if spec is not None else capture_bundle(bundle)
    except (SourceRefused, OSError) as refusal:
        _refuse(verb, refusal)


@agent.command("digest")
@click.option("--spec", default=None, help="One declaration file (*.kdl).")
@click.option("--bundle", default=None, help="A directory with agent.kdl at its top (create-only).")
@click.option("--json", "as_json", is_flag=True, help="Print st2.agent-source-digest.v1.")
def digest(spec: str | None, bundle: str | None, as_json: bool) -> None:
    """Print the digest `st2 agent publish --input-sha256` binds publication to."""
    captured = _capture("digest", spec, bundle)
    if as_json:
        _emit(captured.wire())
    else:
        click.echo(captured.sha256)


@agent.command("publish")
@click.option("--spec", default=None, help="One declaration file (*.kdl).")
@click.option("--bundle", default=None, help="A directory with agent.kdl at its top (create-only).")
@click.option("--input-sha256", required=True, help="The digest `st2 agent digest` printed for this source.")
@click.option("--expect-absent", is_flag=True, help="Publish only when no declaration exists (or the same bytes).")
@click.option("--expect-sha256", default=None, help="Publish only over the declaration with this SHA-256.")
@click.option("--managed-by", default=None, help="Assert the owner the incumbent's meta { managed-by } names.")
@click.option("--json", "as_json", is_flag=True, help="Print st2.agent-publish.v2.")
@catalog_options
def publish(spec, bundle, input_sha256, expect_absent, expect_sha256, managed_by, as_json, location) -> None:
    """Publish one declaration by compare-and-swap through the full-catalog validation gate."""
    from st2.authoring.authority import AuthorityRefused
    from st2.authoring.gate import GateRefused
    from st2.authoring.publication import CasLost, PublishRefused, publish as publish_captured

    if expect_absent == (expect_sha256 is not None):
        raise click.UsageError("give exactly one of --expect-absent or --expect-sha256 H")
    captured = _capture("publish", spec, bundle)
    try:
        receipt = publish_captured(location, captured, spec or f"{bundle}/agent.kdl", input_sha256,
                                   expect_sha256=expect_sha256, managed_by=managed_by)
    except CasLost as lost:
        click.echo(f"st2 agent publish: {lost}", err=True)
        if as_json:
            _emit(lost.wire())
        else:
            click.echo(lost.current or "absent")
        exit_with(CAS_LOST_EXIT)
        return
    except (PublishRefused, AuthorityRefused, GateRefused, OSError) as refusal:
        _refuse("publish", refusal)
        return
    if as_json:
        _emit(receipt.wire())
    else:
        click.echo(receipt.line())
