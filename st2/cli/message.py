"""``st2 message send|reply|ls|sent|read|archive|thread`` — parsing glue over :mod:`st2.bus`."""

from __future__ import annotations

import json
import os
import sys

import click

from st2.bus.envelope import shown
from st2.cli.common import catalog_options

ACTING_HELP = ("Acting identity (default $ST_AGENT, then this host's operator principal): the sender, "
               "or whose boxes are 'mine'.")


def acting_identity(as_option: str | None, location=None) -> str:
    """``--as``, else ``$ST_AGENT``, else (given ``location``) the bus id of this host's
    declared operator principal — a human at a shell sends as the operator."""
    from st2.bus.principals import NO_ACTING_IDENTITY

    value = as_option or os.environ.get("ST_AGENT") or ""
    if value:
        return value
    if location is not None:
        from st2.bus.principals import operator_principal

        operator = bus_call(operator_principal, location.root, location.host)
        if operator is not None:
            return operator.bus_id
    raise click.ClickException(NO_ACTING_IDENTITY)


def sending_identity(as_option: str | None, location) -> str:
    """The declared bus id a message is sent as (:func:`st2.bus.principals.sender_id`): refused,
    like a recipient, when it names no declared seat or principal or names several."""
    from st2.bus.principals import sender_id

    return bus_call(sender_id, as_option or os.environ.get("ST_AGENT") or "", location.root, location.host)


def body_text(message: str | None) -> str:
    """``-m`` when given, else stdin (so ``st2 message send x < file`` works)."""
    if message is not None:
        return message
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as error:
        raise click.ClickException(f"message body on stdin is not UTF-8: {error.reason}") from None


def print_json(value) -> None:
    click.echo(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def bus_call(function, *args, **kwargs):
    """Run a bus operation; its refusal becomes the verb's error (exit 1, reason on stderr)."""
    from st2.bus import BusError

    try:
        return function(*args, **kwargs)
    except BusError as error:
        raise click.ClickException(str(error)) from None


def _split_target(first: str, second: str | None, as_option: str | None, location=None) -> tuple[str, str]:
    """``[identity] <filename>``: with two words the first names the box owner."""
    if second is not None:
        return first, second
    return acting_identity(as_option, location), first


@click.group("message")
def message() -> None:
    """Mail between seats: files in each seat's resources/inbox and resources/archive."""


@message.command("send")
@click.argument("to", required=False)
@click.option("--to-id", default=None, help="Recipient by its immutable declared id.")
@click.option("-m", "--message", "text", default=None, help="The body (default: stdin).")
@click.option("--subject", default=None)
@click.option("--in-reply-to", default=None, help="Filename of the message this answers.")
@click.option("--tags", default=None, help="Comma-separated tags.")
@click.option("--priority", type=click.Choice(["low", "normal", "high"]), default=None)
@click.option("--idempotency-key", default=None, help="Publish at most one message for this key.")
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON receipt.")
@catalog_options
def send_command(to, to_id, text, subject, in_reply_to, tags, priority, idempotency_key,
                 as_option, as_json, location) -> None:
    """Send a message to TO (identity, host.identity or address) or --to-id."""
    from st2.bus.addressing import OneReading, resolve_seat
    from st2.bus.send import send

    with OneReading():
        sender = sending_identity(as_option, location)
        recipient = bus_call(resolve_seat, location.root, to, to_id=to_id)
        tag_list = tuple(tag.strip() for tag in tags.split(",") if tag.strip()) if tags else ()
        receipt = bus_call(
            send, location.root, recipient, sender=sender, body=body_text(text), subject=subject,
            in_reply_to=in_reply_to, tags=tag_list, priority=priority, idempotency_key=idempotency_key,
        )
    if as_json:
        print_json(receipt.json_row())
    else:
        click.echo(receipt.filename)


@message.command("reply")
@click.argument("filename")
@click.option("-m", "--message", "text", default=None, help="The body (default: stdin).")
@click.option("--subject", default=None, help="Default: 're: <original subject>'.")
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@catalog_options
def reply_command(filename, text, subject, as_option, location) -> None:
    """Reply to FILENAME in your inbox (or archive); recipient and threading come from it."""
    from st2.bus.envelope import reply_subject
    from st2.bus.mailbox import archive_of, inbox_of, read_message
    from st2.bus.principals import resolve_box_owner
    from st2.bus.send import send

    me = bus_call(resolve_box_owner, location.root, acting_identity(as_option, location), location.host)
    sender = me.bus_id
    original = bus_call(read_message, inbox_of(me.directory), filename) or bus_call(
        read_message, archive_of(me.directory), filename
    )
    if original is None:
        raise click.ClickException(f"no message {filename} in {me.bus_id}'s inbox or archive")
    if not original.sender:
        raise click.ClickException(f"message {filename} has no sender to reply to")
    recipient = bus_call(resolve_box_owner, location.root, original.sender, location.host)
    receipt = bus_call(
        send, location.root, recipient, sender=sender, body=body_text(text),
        subject=subject if subject is not None else reply_subject(original.subject),
        in_reply_to=filename,
    )
    click.echo(receipt.filename)


@message.command("ls")
@click.argument("identity", required=False)
@click.option("--archive", is_flag=True, help="List the archive instead of the inbox.")
@click.option("--count", is_flag=True, help="Print only the number of messages.")
@click.option("--include-body", is_flag=True, help="Add each body to --json rows.")
@click.option("--from", "from_", default=None, help="Only messages from this sender.")
@click.option("--since", type=int, default=None, help="Only messages sent after this unix ms.")
@click.option("--json", "as_json", is_flag=True, help="A JSON array of rows.")
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@catalog_options
def ls_command(identity, archive, count, include_body, from_, since, as_json, as_option,
               location) -> None:
    """List an inbox (default: yours), oldest first."""
    from st2.bus.mailbox import archive_of, list_box, list_inbox
    from st2.bus.principals import resolve_box_owner

    name = identity or acting_identity(as_option, location)
    owner = bus_call(resolve_box_owner, location.root, name, location.host)
    messages = list_box(archive_of(owner.directory)) if archive else list_inbox(owner.directory)
    if from_ is not None:
        messages = [m for m in messages if m.sender == from_]
    if since is not None:
        messages = [m for m in messages if m.ts > since]
    if count:
        click.echo(len(messages))
    elif as_json:
        print_json([m.row(include_body) for m in messages])
    else:
        box = "archive" if archive else "inbox"
        plural = "" if len(messages) == 1 else "s"
        click.echo(f"# {len(messages)} message{plural} in {owner.bus_id} {box}")
        for m in messages:
            click.echo(f"{m.filename}  from {shown(m.sender) or '<unknown>'}  {'(no subject)' if m.subject is None else shown(m.subject)}")


@message.command("sent")
@click.option("--count", is_flag=True)
@click.option("--include-body", is_flag=True)
@click.option("--json", "as_json", is_flag=True)
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@catalog_options
def sent_command(count, include_body, as_json, as_option, location) -> None:
    """List what you sent (the ledger), oldest first."""
    from st2.bus import sent
    from st2.bus.envelope import check_name

    sender = acting_identity(as_option, location)
    bus_call(check_name, "sender", sender)
    messages = bus_call(sent.list_sent, location.root, sender)
    if count:
        click.echo(len(messages))
    elif as_json:
        print_json([sent.row(m, include_body) for m in messages])
    else:
        plural = "" if len(messages) == 1 else "s"
        click.echo(f"# {len(messages)} message{plural} sent by {sender}")
        for m in messages:
            click.echo(f"{m.filename}  to {shown(m.extra.get('to')) or '<unknown>'}  {'(no subject)' if m.subject is None else shown(m.subject)}")


@message.command("read")
@click.argument("first")
@click.argument("second", required=False)
@click.option("--archive", is_flag=True, help="Read from the archive.")
@click.option("--raw", is_flag=True, help="Print the file verbatim.")
@click.option("--json", "as_json", is_flag=True)
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@catalog_options
def read_command(first, second, archive, raw, as_json, as_option, location) -> None:
    """Show one message: `read FILENAME` (yours) or `read IDENTITY FILENAME`."""
    from st2.bus.mailbox import archive_of, inbox_of, read_raw, refusal
    from st2.bus.envelope import parse
    from st2.bus.principals import resolve_box_owner

    name, filename = _split_target(first, second, as_option, location)
    owner = bus_call(resolve_box_owner, location.root, name, location.host)
    box = archive_of(owner.directory) if archive else inbox_of(owner.directory)
    data = bus_call(read_raw, box, filename)
    if data is None:
        reason = refusal(box, filename)
        if reason is not None:
            raise click.ClickException(f"message {filename} in {owner.bus_id}'s {'archive' if archive else 'inbox'} "
                                       f"{reason}; not read")
        hint = ""
        if not archive and bus_call(read_raw, archive_of(owner.directory), filename) is not None:
            hint = " (it is archived; add --archive)"
        raise click.ClickException(f"no message {filename} in {owner.bus_id}'s {'archive' if archive else 'inbox'}{hint}")
    if raw:
        sys.stdout.buffer.write(data)
        return
    m = parse(filename, data)
    if as_json:
        print_json(m.row(include_body=True))
        return
    click.echo(f"from:        {shown(m.sender) or '<unknown>'}")
    if m.subject is not None:
        click.echo(f"subject:     {shown(m.subject)}")
    if m.in_reply_to is not None:
        click.echo(f"in-reply-to: {shown(m.in_reply_to)}")
    if m.tags:
        click.echo(f"tags:        {shown(', '.join(m.tags))}")
    if m.priority is not None:
        click.echo(f"priority:    {shown(m.priority)}")
    click.echo()
    click.echo(shown(m.body, multiline=True), nl=False)


@message.command("archive")
@click.argument("first")
@click.argument("second", required=False)
@click.option("--as", "as_option", default=None, help=ACTING_HELP)
@catalog_options
def archive_command(first, second, as_option, location) -> None:
    """Mark a message read: move it inbox -> archive (idempotent)."""
    from st2.bus.mailbox import archive_message
    from st2.bus.principals import resolve_box_owner

    name, filename = _split_target(first, second, as_option, location)
    owner = bus_call(resolve_box_owner, location.root, name, location.host)
    outcome = bus_call(archive_message, owner.directory, filename)
    click.echo(outcome.value)


@message.command("thread")
@click.argument("first")
@click.argument("second", required=False)
@click.option("--tree", is_flag=True, help="Indent by reply depth instead of flat by time.")
@catalog_options
def thread_command(first, second, tree, location) -> None:
    """Show a message's whole thread across the catalog."""
    from st2.bus.thread import collect

    filename = second or first
    entries = bus_call(collect, location.root, filename)
    if not entries:
        raise click.ClickException(f"no thread found for {filename} in catalog {location.root}")
    if not tree:
        entries = sorted(entries, key=lambda entry: (entry.message.ts, entry.message.filename))
    for entry in entries:
        indent = "  " * entry.depth if tree else ""
        m = entry.message
        click.echo(f"{indent}{m.filename}  from {shown(m.sender) or '<unknown>'}  {'(no subject)' if m.subject is None else shown(m.subject)}")


@message.command("guide")
def guide_command() -> None:
    """Print the agent-facing bus guide (mail handling and presence discipline)."""
    from st2.bus.guide import guide_text

    click.echo(guide_text(), nl=False)
