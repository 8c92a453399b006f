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
    """A refusal is one line (anything non-printable in it escaped) and exit 1; an OS error under
    it (disk full, read-only …) is the CLI's one OS-error line and exit 74, however the authoring
    layer wrapped it."""
    from st2.cli import EXIT_OS_ERROR, os_error_line

    cause = refusal if isinstance(refusal, OSError) else refusal.__cause__
    if isinstance(cause, OSError):
        click.echo(os_error_line(["agent", verb], cause), err=True)
        exit_with(EXIT_OS_ERROR)
        return
    from st2.catalog.names import shown

    # One line, every control, escape and bidi character escaped, whatever a message quoted.
    click.echo(f"st2 agent {verb}: {shown(str(refusal))}", err=True)
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
    from st2.authoring.publication import CasLost, publish as publish_captured

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
    except _refusals() as refusal:
        _refuse("publish", refusal)
        return
    if as_json:
        _emit(receipt.wire())
    else:
        click.echo(receipt.line())


def _refusals():
    from st2.authoring.authority import AuthorityRefused
    from st2.authoring.gate import GateRefused
    from st2.authoring.publication import PublishRefused
    from st2.bus import BusError

    return (PublishRefused, AuthorityRefused, GateRefused, BusError, OSError)


def _author(verb: str, as_json: bool, call) -> None:
    """Run one authoring call and print its receipt (JSON or one line), or its refusal."""
    try:
        receipt = call()
    except _refusals() as refusal:
        _refuse(verb, refusal)
        return
    _emit(receipt.wire()) if as_json else click.echo(receipt.line())


def _harness_choices():
    from st2.drivers import available_harnesses

    return available_harnesses()


class _Harness(click.ParamType):
    """Offers exactly the harnesses whose driver exists, read when the verb runs."""

    name = "harness"

    def get_metavar(self, param, ctx=None) -> str:
        return "[" + "|".join(_harness_choices()) + "]"

    def convert(self, value, param, ctx):
        choices = _harness_choices()
        if value not in choices:
            self.fail(f"{value!r} has no driver; choose one of {', '.join(choices)}", param, ctx)
        return value


@agent.command("new")
@click.argument("identity")
@click.option("--harness", required=True, type=_Harness(), help="shell, or a harness whose driver exists.")
@click.option("--workspace", default=None, help="The seat's working directory.")
@click.option("--json", "as_json", is_flag=True, help="Print st2.agent-publish.v2.")
@catalog_options
def new(identity: str, harness: str, workspace: str | None, as_json: bool, location) -> None:
    """Declare a new seat from a valid starter declaration (published like `agent publish`)."""
    from st2.authoring.publication import CasLost
    from st2.authoring.starter import new_seat

    try:
        created = new_seat(location, identity, harness, workspace)
    except CasLost as lost:
        click.echo(f"st2 agent new: [seat-exists] {lost.agent} is already declared at {lost.path}", err=True)
        exit_with(1)
        return
    except _refusals() as refusal:
        _refuse("new", refusal)
        return
    receipt = created.published
    if as_json:
        _emit(receipt.wire())
        return
    if receipt.status == "unchanged":
        click.echo(f"{receipt.agent} is already declared exactly so at {receipt.path}")
    else:
        click.echo(f"declared {receipt.agent} at {receipt.path}; `st2 up` launches it")
    if created.operator is not None:
        click.echo(f"declared the operator principal {created.operator}: `st2 message send {receipt.agent} "
                   f"-m …` mails the seat as {created.operator}")


@agent.command("describe")
@click.argument("identity")
@click.option("--name", default=None, help="The seat's display name (at most 160 characters).")
@click.option("--description", default=None, help="What the seat is for (at most 1000 characters).")
@click.option("--clear-name", is_flag=True, help="Remove the name.")
@click.option("--clear-description", is_flag=True, help="Remove the description.")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def describe(identity, name, description, clear_name, clear_description, as_json, location) -> None:
    """Set or clear a seat's presentation: its name and description (never its identity)."""
    from st2.authoring.presentation import KEEP, describe as describe_seat

    if (name is not None and clear_name) or (description is not None and clear_description):
        raise click.UsageError("a field is either set or cleared, not both")
    if name is None and description is None and not clear_name and not clear_description:
        raise click.UsageError("give --name, --description, --clear-name or --clear-description")
    _author("describe", as_json, lambda: describe_seat(
        location, identity, name=None if clear_name else (KEEP if name is None else name),
        description=None if clear_description else (KEEP if description is None else description)))


@agent.command("address")
@click.argument("identity")
@click.argument("value", required=False)
@click.option("--clear", is_flag=True, help="Remove the address (the bare identity answers again).")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def address(identity, value, clear, as_json, location) -> None:
    """Set or clear a seat's bus address (never its identity or directory)."""
    from st2.authoring.presentation import address as address_seat

    if (value is None) == (not clear):
        raise click.UsageError("give an ADDRESS or --clear")
    _author("address", as_json, lambda: address_seat(location, identity, None if clear else value))


@agent.command("account")
@click.argument("identity")
@click.argument("value", required=False)
@click.option("--clear", is_flag=True, help="Remove the account (the seat runs on the host's own configuration).")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def account(identity, value, clear, as_json, location) -> None:
    """Move a seat to another declared account: relaunched there at its next idle boundary."""
    from st2.authoring.account import set_account

    if (value is None) == (not clear):
        raise click.UsageError("give an ACCOUNT or --clear")
    _author("account", as_json, lambda: set_account(location, identity, None if clear else value))


@agent.group("stream")
def stream() -> None:
    """Declare or remove a seat's streams."""


@stream.command("add", context_settings={"ignore_unknown_options": True})
@click.argument("identity")
@click.argument("name")
@click.argument("argv", nargs=-1, type=click.UNPROCESSED)
@click.option("--command", default=None, help="A shell command the stream's adapter runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def stream_add(identity, name, argv, command, as_json, location) -> None:
    """Declare stream NAME on IDENTITY: external ingress, or an adapter given as `-- ARGV…` or
    --command."""
    import os

    from st2.authoring.streams import add

    _author("stream add", as_json, lambda: add(location, identity, name, argv=tuple(argv) if argv else None,
                                               command=command, actor=os.environ.get("ST_AGENT")))


@stream.command("rm")
@click.argument("identity")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def stream_rm(identity, name, as_json, location) -> None:
    """Remove stream NAME from IDENTITY (unchanged when it is not declared)."""
    import os

    from st2.authoring.streams import remove

    _author("stream rm", as_json, lambda: remove(location, identity, name, actor=os.environ.get("ST_AGENT")))


@agent.group("resource")
def resource() -> None:
    """A seat's resource bindings: declare, remove, refresh, show, list."""


@resource.command("add")
@click.argument("identity")
@click.argument("name")
@click.option("--uri", required=True, help="The exact absolute URI the binding names.")
@click.option("--reason", default=None, help="Why the seat holds it (one printable line, at most 160 bytes).")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def resource_add(identity, name, uri, reason, as_json, location) -> None:
    """Declare resource NAME on IDENTITY."""
    import os

    from st2.authoring.resources import add

    _author("resource add", as_json, lambda: add(location, identity, name, uri, reason,
                                                 actor=os.environ.get("ST_AGENT")))


@resource.command("rm")
@click.argument("identity")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def resource_rm(identity, name, as_json, location) -> None:
    """Remove resource NAME from IDENTITY (unchanged when it is not declared)."""
    import os

    from st2.authoring.resources import remove

    _author("resource rm", as_json, lambda: remove(location, identity, name, actor=os.environ.get("ST_AGENT")))


@resource.command("refresh")
@click.argument("identity")
@click.argument("name")
@click.option("--wait", "wait", default=None, help="Wait this long (e.g. 10s) for the receipt; expiry cancels nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def resource_refresh(identity, name, wait, as_json, location) -> None:
    """Demand an observation of IDENTITY's resource NAME now; print its receipt."""
    from st2.base.clock import SYSTEM_CLOCK
    from st2.declarations.durations import DurationRefused, parse_duration
    from st2.resources.commands import ResourceRefused, receipt_line, refresh
    from st2.resources.demand import receipt_wire

    try:
        seconds = parse_duration(wait) if wait is not None else None
    except DurationRefused as refusal:
        _refuse("resource refresh", ValueError(f"--wait {refusal}"))
        return
    try:
        receipt = refresh(location, identity, name, seconds, SYSTEM_CLOCK.wall_ms)
    except (ResourceRefused, OSError) as refusal:
        _refuse("resource refresh", refusal)
        return
    if as_json:
        _emit(receipt_wire(receipt))
    else:
        click.echo(receipt_line(receipt))


@resource.command("propose")
@click.argument("identity")
@click.argument("name")
@click.option("--input", "input_path", required=True, type=click.Path(dir_okay=False),
              help="The file holding the proposed content.")
@click.option("--expect-revision", type=int, required=True, help="The state revision the proposal is made from.")
@click.option("--json", "as_json", is_flag=True, help="Print the receipt as JSON.")
@catalog_options
def resource_propose(identity, name, input_path, expect_revision, as_json, location) -> None:
    """Replace IDENTITY's file: resource NAME with --input, if it is still at --expect-revision
    (exit 3 when the revision moved, 1 for any other refusal)."""
    from st2.base.clock import SYSTEM_CLOCK
    from st2.fs.read import read_bounded
    from st2.resources.commands import ResourceRefused, propose
    from st2.resources.observers import CONTENT_LIMIT
    from st2.resources.proposal import ProposalRefused

    try:
        data = read_bounded(input_path, CONTENT_LIMIT + 1)
        receipt = propose(location, identity, name, data, expect_revision, SYSTEM_CLOCK.wall_ms)
    except ProposalRefused as refusal:
        click.echo(f"st2 agent resource propose: {refusal.code}: {refusal}", err=True)
        exit_with(CAS_LOST_EXIT if refusal.code == "revision-moved" else 1)
        return
    except (ResourceRefused, OSError) as refusal:
        _refuse("resource propose", refusal)
        return
    if as_json:
        _emit(receipt)
    else:
        click.echo(f"{receipt['agent']} resource {receipt['binding']!r}: proposal {receipt['proposal']} committed "
                   f"at revision {receipt['revision']} (generation {receipt['generation']})")


@resource.command("recover")
@click.argument("identity")
@click.argument("name")
@catalog_options
def resource_recover(identity, name, location) -> None:
    """Re-adopt IDENTITY's file: resource NAME as it is after out-of-band divergence (advances
    its generation; proposals are refused until this runs)."""
    from st2.base.clock import SYSTEM_CLOCK
    from st2.resources.commands import ResourceRefused, recover

    try:
        adopted = recover(location, identity, name, SYSTEM_CLOCK.wall_ms)
    except (ResourceRefused, OSError) as refusal:
        _refuse("resource recover", refusal)
        return
    click.echo(f"{adopted.agent} resource {adopted.binding!r} re-adopted at revision {adopted.revision}, "
               f"generation {adopted.generation}")


@resource.command("show")
@click.argument("identity")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print it as JSON.")
@catalog_options
def resource_show(identity, name, as_json, location) -> None:
    """Show IDENTITY's resource NAME: its declaration and its last accepted state."""
    from st2.resources.commands import ResourceRefused, show, state_line

    try:
        entry = show(location, identity, name)
    except ResourceRefused as refusal:
        _refuse("resource show", refusal)
        return
    if as_json:
        _emit(entry)
        return
    click.echo(state_line(entry))
    for key, value in ((entry["state"] or {}).get("facts") or {}).items():
        click.echo(f"  {key}: {json.dumps(value, ensure_ascii=True)[:200]}")


@resource.command("ls")
@click.argument("identity")
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON (one array).")
@catalog_options
def resource_ls(identity, as_json, location) -> None:
    """List IDENTITY's resource bindings and their states."""
    from st2.resources.commands import ResourceRefused, listing, state_line

    try:
        entries = listing(location, identity)
    except ResourceRefused as refusal:
        _refuse("resource ls", refusal)
        return
    if as_json:
        click.echo(json.dumps(entries, ensure_ascii=False, separators=(",", ":")))
        return
    for entry in entries:
        click.echo(state_line(entry))


@agent.group("worktree")
def worktree() -> None:
    """A seat's own git worktree."""


@worktree.command("rm")
@click.argument("identity")
@click.option("--force", is_flag=True, help="Remove it even though it holds work (each item is printed first).")
@catalog_options
def worktree_rm(identity: str, force: bool, location) -> None:
    """Remove IDENTITY's worktree (a retired, suspended or archived seat's); one holding
    uncommitted changes, untracked files, stashes or unpushed commits only with --force."""
    from st2.authoring.worktrees import WorktreeRefused, remove
    from st2.runtime import launch_record
    from st2.runtime.scope import RuntimeScope

    scope = RuntimeScope(location.root, location.host)
    try:
        removal = remove(location, identity, lambda: launch_record.recorded_ids(scope), force=force,
                         announce=lambda line: click.echo(line))
    except (WorktreeRefused, OSError) as refusal:
        _refuse("worktree rm", refusal)
        return
    for line in removal.lines():
        click.echo(line)
