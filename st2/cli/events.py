"""``st2 events [--follow] [--since MS] [--host H] [--json]``: the fleet's typed transitions
(parsing glue; the journal is :mod:`st2.events.journal`, the follower its :class:`Follower`).

Each host's supervisor journals what it observes of the whole catalog (every host's seats) in
its own host-local journal. As with ``st2 agents``: ``st2 events --host H`` is host H's journal
narrowed to H's seats (the fleet-wide usage events are kept); ``st2 --host H events`` is host H's
journal, every seat."""

from __future__ import annotations

import sys

import click

from st2.cli.common import catalog_options, exit_with, verb_host


@click.command("events")
@click.option("--follow", is_flag=True, help="Keep printing events as the supervisor journals them.")
@click.option("--since", "since_ms", type=int, default=None, metavar="MS",
              help="Only events observed at or after this unix time in milliseconds.")
@click.option("--json", "as_json", is_flag=True, help="One st2.fleet-event.v1 JSON line per event.")
@catalog_options
def events(follow: bool, since_ms: int | None, as_json: bool, location) -> None:
    """Typed transitions of the fleet: blocked on a human, parked or crash-looping tasks, context
    past its advisory threshold, compactions, usage PAUSE/STALE, driver diagnostics, stale records.

    Without --follow, print what the journal holds (since --since); with no journal, only what
    the current records prove. --host H: H's journal, only H's seats."""
    from st2.events import reading

    seat_host = verb_host()
    if since_ms is not None and since_ms < 0:
        raise click.BadParameter("must be a unix time in milliseconds", param_hint="--since")
    show = reading.printer(as_json, seat_host, since_ms, sys.stdout)
    try:
        if follow:
            from st2.runtime.scope import RuntimeScope
            from st2.supervisor import supervisor_record

            if supervisor_record.running(RuntimeScope(location.root, location.host)) is None:
                click.echo(f"st2 events: no st2 up is journaling events for {location.host}; following the journal "
                           "anyway", err=True)
            status = reading.follow(location, show, since_ms, sys.stderr)
        else:
            from st2.supervisor.park import believed

            status = reading.print_once(location, show, sys.stderr, park_reader=believed)
    except BrokenPipeError:
        status = 0
    exit_with(status)
