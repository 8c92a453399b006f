"""``st2 event emit`` — stream ingress (:mod:`st2.bus.stream`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options
from st2.cli.message import bus_call, acting_identity, body_text, print_json


@click.group("event")
def event() -> None:
    """Events from a seat's declared streams into its inbox."""


@event.command("emit")
@click.argument("recipient", required=False)
@click.option("--stream", required=True, help="A stream the recipient declares.")
@click.option("--event-id", required=True, help="The producer's stable id for this event.")
@click.option("--key", default=None, help="Supersession key (with --supersede).")
@click.option("--supersede", is_flag=True, help="Archive the predecessor (same key, or the stream head).")
@click.option("--subject", default=None)
@click.option("-m", "--message", "text", default=None, help="The body (default: stdin).")
@click.option("--json", "as_json", is_flag=True)
@catalog_options
def emit_command(recipient, stream, event_id, key, supersede, subject, text, as_json,
                 location) -> None:
    """Publish one event to RECIPIENT (default $ST_AGENT, the seat a stream adapter runs for)."""
    from st2.bus.addressing import resolve_seat
    from st2.bus.stream import emit

    seat = bus_call(resolve_seat, location.root, recipient or acting_identity(None))
    result = bus_call(
        emit, location.root, seat, stream=stream, event_id=event_id, body=body_text(text),
        key=key, supersede=supersede, subject=subject,
    )
    if as_json:
        print_json(result.json_row())
    else:
        click.echo(result.filename)
