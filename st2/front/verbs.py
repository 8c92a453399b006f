"""The cores of ``st2 message send`` and ``st2 agents`` on the click-free route
(:mod:`st2.front.table`), for words already read in the shape their click commands accept.

Agents send mail many times an hour, and importing click and the CLI tree would cost ``st2 message
send`` about as much as the send itself (docs/memory.md §Roster, mail and hook latency at fleet
scale). A catalog that is not a directory, a sender or recipient that does not resolve, an
``--identity`` naming no seat, an OS error while the roster reads before it printed anything: each
returns None before anything is printed or sent, and the click CLI runs the words instead, printing
its own usage or error. Otherwise the verb is the click command's
(:func:`st2.cli.message.send_command`, :func:`st2.cli.agents.agents`): the same calls, the same
output bytes (text holding an escape is echoed by click itself, which strips ANSI sequences off a
terminal), a send's failures rendered through the same click exception (imported only then), so
stdout, stderr and the exit status are byte-identical whichever route ran
(tests/bus/test_fast_send.py and tests/roster/test_fast_agents.py compare them).

Standard library only at import; the bus or the roster is imported when its verb runs.
"""

from __future__ import annotations

import os
import sys


def echo(text: str, *, err: bool = False) -> None:
    """``click.echo(text, err=err)``: the same bytes. Text holding an escape goes through click
    itself (it strips ANSI sequences from a stream that is not a terminal)."""
    if "\x1b" in text:
        import click

        click.echo(text, err=err)
        return
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def location_of(root_values: dict[str, str], values: dict[str, str]):
    """The catalog root (as text, the str of the ``Path`` the click verb's ``catalog_options``
    would resolve) and host, or None when the root is not a directory (click then says so)."""
    from st2.catalog.location import catalog_root_text, resolve_host

    root = catalog_root_text(values.get("--catalog") or root_values.get("--catalog")
                             or os.environ.get("CATALOG") or None)
    return (root, resolve_host(values.get("--host") or root_values.get("--host"))) if os.path.isdir(root) else None


def agents(call) -> int | None:
    """:func:`st2.cli.agents.agents` for a :class:`st2.front.table.Call` (both run
    :func:`st2.roster.verb.agents`)."""
    from st2.roster.verb import agents as print_roster

    words, root_values, values, flags = call.words, call.root, call.parsed.values, call.parsed.flags

    location = location_of(root_values, values)
    if location is None:
        return None
    from pathlib import Path  # the roster's paths are Paths (it pays for pathlib; a send does not)

    root, host = location
    printed = Printed()
    try:
        return print_roster(Path(root), host, as_json="--json" in flags, enrich="--enrich" in flags,
                            status_filter=values.get("--status"), identity_filter=values.get("--identity"),
                            host_filter=values.get("--host") or None, echo=printed)
    except OSError as error:
        if not printed.anything:
            return None  # the roster only reads (its cache is only a saving): click says why
        from st2.fs.errors import EXIT_OS_ERROR, os_error_line

        echo(os_error_line(words, error), err=True)
        return EXIT_OS_ERROR


class Printed:
    """:func:`echo` that remembers whether it printed anything."""

    def __init__(self) -> None:
        self.anything = False

    def __call__(self, text: str, *, err: bool = False) -> None:
        self.anything = True
        echo(text, err=err)


def message_send(call) -> int | None:
    """The send of :func:`st2.cli.message.send_command` for a :class:`st2.front.table.Call`,
    reading the catalog's seats once (:class:`st2.bus.addressing.OneReading`) as that command
    does."""
    from st2.bus.addressing import OneReading

    parsed = call.parsed
    with OneReading():
        return _message_send(call.words, call.root, parsed.values, "--json" in parsed.flags,
                             parsed.positionals[0] if parsed.positionals else None)


def _message_send(words: list[str], root_values: dict[str, str], values: dict[str, str], as_json: bool,
                  to: str | None) -> int | None:
    from st2.bus import BusError
    from st2.bus.addressing import resolve_seat
    from st2.bus.principals import sender_id

    try:
        location = location_of(root_values, values)
        if location is None:
            return None
        root, host = location
        sender = sender_id(values.get("--as") or os.environ.get("ST_AGENT") or "", root, host)
        recipient = resolve_seat(root, to, to_id=values.get("--to-id"))
    except (BusError, OSError):
        return None  # nothing read or written yet: click resolves again and says why
    tags = values.get("--tags")
    tag_list = tuple(tag.strip() for tag in tags.split(",") if tag.strip()) if tags else ()
    from st2.bus.send import send
    from st2.fs.errors import EXIT_OS_ERROR, os_error_line

    try:
        body = values.get("--message")
        if body is None:
            try:
                body = sys.stdin.buffer.read().decode("utf-8")
            except UnicodeDecodeError as error:
                return click_error(f"message body on stdin is not UTF-8: {error.reason}")
        receipt = send(root, recipient, sender=sender, body=body, subject=values.get("--subject"),
                       in_reply_to=values.get("--in-reply-to"), tags=tag_list, priority=values.get("--priority"),
                       idempotency_key=values.get("--idempotency-key"))
    except BusError as error:
        return click_error(str(error))
    except OSError as error:
        import click

        click.echo(os_error_line(words, error), err=True)
        return EXIT_OS_ERROR
    if as_json:
        import json

        echo(json.dumps(receipt.json_row(), separators=(",", ":"), ensure_ascii=False))
    else:
        echo(receipt.filename)
    return 0


def click_error(message: str) -> int:
    """Show ``message`` as the click CLI shows a refusal (``Error: …`` on stderr), exit 1."""
    import click

    error = click.ClickException(message)
    error.show()
    return error.exit_code
