"""``st2 catalog …``: archive, unarchive and observe the catalog, and print the replication
engine's rules (parsing glue over :mod:`st2.authoring.archive`, :mod:`st2.authoring.graph` and
:mod:`st2.catalog.sync_rules`).

Exit status: 0 done, 1 refused (nothing moved) or, for ``graph``, an incomplete graph.
"""

from __future__ import annotations

import json

import click

from st2.catalog.sync_rules import FORMATS as SYNC_FORMATS
from st2.cli.common import catalog_options, exit_with


def _emit(value: dict) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _recorded_ids(location):
    """The runtime ids with a launch record (live or dead) in this catalog's host scope."""
    from st2.runtime import launch_record
    from st2.runtime.scope import RuntimeScope

    return lambda: launch_record.recorded_ids(RuntimeScope(location.root, location.host))


@click.group("catalog")
def catalog() -> None:
    """Archive retired seats, restore them, observe the declaration graph, print sync rules."""


@catalog.command("archive")
@click.option("--identity", "identities", multiple=True, help="A retired seat to archive (repeatable).")
@click.option("--all-retired", is_flag=True, help="Every eligible retired seat of this host.")
@click.option("--dry-run", is_flag=True, help="Report the plan; create and move nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print st2.catalog-archive.v1.")
@catalog_options
def archive(identities: tuple[str, ...], all_retired: bool, dry_run: bool, as_json: bool, location) -> None:
    """Move retired seats byte-identically under .st2/archive/<host>/, each with a tombstone."""
    from st2.authoring.archive import ArchiveRefused, archive as archive_seats
    from st2.base.clock import command_clock

    if bool(identities) == all_retired:
        raise click.UsageError("give --identity X (repeatable) or --all-retired")
    try:
        result = archive_seats(location, list(identities) if identities else None, _recorded_ids(location),
                               now_ms=command_clock().wall_ms(), dry_run=dry_run)
    except (ArchiveRefused, OSError) as refusal:
        click.echo(f"st2 catalog archive: {refusal}", err=True)
        exit_with(1)
        return
    if as_json:
        _emit(result.wire())
    else:
        for line in result.lines():
            click.echo(line)


@catalog.command("unarchive")
@click.argument("identity")
@click.option("--json", "as_json", is_flag=True, help="Print st2.catalog-unarchive.v1.")
@catalog_options
def unarchive(identity: str, as_json: bool, location) -> None:
    """Restore an archived seat byte-identically to the live catalog."""
    from st2.authoring.archive import ArchiveRefused, unarchive as unarchive_seat

    try:
        result = unarchive_seat(location, identity)
    except (ArchiveRefused, OSError) as refusal:
        click.echo(f"st2 catalog unarchive: {refusal}", err=True)
        exit_with(1)
        return
    if as_json:
        _emit(result)
    else:
        click.echo(f"restored {result['id']} -> {result['to']}; `st2 up` converges it")


@catalog.command("graph")
@click.option("--json", "as_json", is_flag=True, help="Print st2.catalog-graph.v2 (the only form).")
@catalog_options
def graph(as_json: bool, location) -> None:
    """The declaration graph with its runtime rows and archived tombstones; exits 1 when incomplete."""
    from st2.authoring.graph import build
    from st2.supervisor.inventory import inventory
    from st2.runtime.scope import RuntimeScope

    if not location.root.is_dir():
        click.echo(f"st2 catalog graph: there is no catalog directory at {location.root}", err=True)
        exit_with(1)
        return
    envelope = build(location, inventory(location), RuntimeScope(location.root, location.host).sockets)
    _emit(envelope)
    exit_with(0 if envelope["complete"] else 1)


@catalog.command("sync-rules")
@click.option("--format", "engine", required=True, type=click.Choice(SYNC_FORMATS),
              help="The replication engine whose rule syntax to print.")
@click.option("--with-declarations", is_flag=True,
              help="Also carry catalog.kdl, _templates/, agent.kdl and principal.kdl (author in one place).")
def sync_rules(engine: str, with_declarations: bool) -> None:
    """Print the include/ignore rules a replication engine needs to carry this catalog between
    hosts: syncthing prints a whole .stignore, rsync a filter file, unison profile lines."""
    from st2.catalog.sync_rules import render

    click.echo(render(engine, with_declarations), nl=False)
