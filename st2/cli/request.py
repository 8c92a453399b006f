"""``st2 request send|read|reply|status`` — idempotent service requests (:mod:`st2.bus.request`)."""

from __future__ import annotations

import click

from st2.cli.common import catalog_options
from st2.cli.message import bus_call, acting_identity, body_text, print_json


def _print(result: dict, as_json: bool, summary: str) -> None:
    if as_json:
        print_json(result)
    else:
        click.echo(summary)


@click.group("request")
def request() -> None:
    """Requests from a declared service principal to an agent, with typed replies."""


@request.command("send")
@click.argument("to")
@click.option("--idempotency-key", required=True, help="At most one request per key.")
@click.option("--tag", "tags", multiple=True, help="key=value (repeatable).")
@click.option("-m", "--message", "text", default=None, help="JSON body (default: stdin).")
@click.option("--as", "as_option", default=None, help="The declared principal (default $ST_AGENT).")
@click.option("--json", "as_json", is_flag=True)
@catalog_options
def send_command(to, idempotency_key, tags, text, as_option, as_json, location) -> None:
    """Publish one JSON request to agent TO."""
    from st2.bus import request as core

    principal = acting_identity(as_option)
    receipt = bus_call(
        core.send, location.root, location.host, principal_name=principal, recipient=to,
        idempotency_key=idempotency_key, tags=bus_call(core.parse_tags, tags),
        body=bus_call(core.parse_body, body_text(text)),
    )
    _print(receipt.json_row(), as_json, receipt.filename)


@request.command("read")
@click.argument("filename")
@click.option("--as", "as_option", default=None, help="The addressed agent (default $ST_AGENT).")
@click.option("--json", "as_json", is_flag=True)
@catalog_options
def read_command(filename, as_option, as_json, location) -> None:
    """Show the typed request FILENAME from your inbox or archive."""
    from st2.bus import request as core

    result = bus_call(core.read, location.root, location.host,
                       agent_name=acting_identity(as_option), filename=filename)
    _print(result, as_json, print_json_text(result))


@request.command("reply")
@click.argument("filename")
@click.option("--tag", "tags", multiple=True, help="key=value (repeatable).")
@click.option("-m", "--message", "text", default=None, help="JSON body (default: stdin).")
@click.option("--as", "as_option", default=None, help="The addressed agent (default $ST_AGENT).")
@click.option("--json", "as_json", is_flag=True)
@catalog_options
def reply_command(filename, tags, text, as_option, as_json, location) -> None:
    """Publish the one typed reply to request FILENAME into the principal's inbox."""
    from st2.bus import request as core

    receipt = bus_call(
        core.reply, location.root, location.host, agent_name=acting_identity(as_option),
        filename=filename, tags=bus_call(core.parse_tags, tags),
        body=bus_call(core.parse_body, body_text(text)),
    )
    _print(receipt.json_row(), as_json, receipt.filename)


@request.command("status")
@click.option("--idempotency-key", required=True)
@click.option("--as", "as_option", default=None, help="The declared principal (default $ST_AGENT).")
@click.option("--json", "as_json", is_flag=True)
@catalog_options
def status_command(idempotency_key, as_option, as_json, location) -> None:
    """pending or replied, for the request published under the key."""
    from st2.bus import request as core

    result = bus_call(core.status, location.root, location.host,
                       principal_name=acting_identity(as_option), idempotency_key=idempotency_key)
    _print(result, as_json, result["status"])


def print_json_text(value) -> str:
    import json

    return json.dumps(value, indent=2, ensure_ascii=False)
