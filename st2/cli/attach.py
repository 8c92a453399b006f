"""``st2 attach <identity>``: attach this terminal to a seat's tmux session."""

from __future__ import annotations

import os

import click

from st2.cli.common import catalog_options, exit_with


@click.command("attach")
@click.argument("identity")
@catalog_options
def attach(identity: str, location) -> None:
    """Exec `tmux -S <socket> attach` for the seat's canonical PTY task (or a PTY runtime id)."""
    from st2.runtime import launch_record
    from st2.runtime.launch_record import MalformedRecord
    from st2.runtime.scope import RuntimeScope
    from st2.supervisor.backends.tmux_backend import attach_argv

    runtime_id = identity if identity.startswith(f"{location.host}.") else f"{location.host}.{identity}"
    if not _declared(location, runtime_id):
        click.echo(f"st2 attach: no seat {runtime_id} is declared in {location.root} "
                   f"(`st2 ls` lists the declared seats)", err=True)
        exit_with(1)
        return
    try:
        record = launch_record.read(RuntimeScope(location.root, location.host), runtime_id)
    except MalformedRecord as error:
        click.echo(f"st2 attach: {error}", err=True)
        exit_with(1)
        return
    if record is None or record.kind != "pty":
        click.echo(f"st2 attach: no running PTY task {runtime_id} (is `st2 up` running?)", err=True)
        exit_with(1)
        return
    argv = attach_argv(record.socket)
    os.execvp(argv[0], argv)


def _declared(location, runtime_id: str) -> bool:
    """True when ``runtime_id`` is a declared seat of this host or a task one of them declares
    (its runtime id extends the seat's: ``<host>.<identity>.<task>``)."""
    from st2.catalog.discovery import discover

    for seat in discover(location.root).seats:
        if seat.host == location.host and (runtime_id == seat.runtime_id
                                           or runtime_id.startswith(seat.runtime_id + ".")):
            return True
    return False
