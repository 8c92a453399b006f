"""Verbs run without click when their argv has the common, well-formed shape.

Agents send mail many times an hour, and importing click and the CLI tree costs ``st2 message
send`` as much as the send itself (measured in benchmarks/hot_paths.py). :func:`run` recognizes
``st2 [--catalog C] [--host H] message send [TO] [options]`` where every word is one the click
command accepts spelled one plain way (``--name value``, ``--name=value``, ``-m value``, the
``--json`` flag), no option repeats, no value or positional starts with ``-`` and stdout is
UTF-8. Anything else — ``--help``, ``--``, an unknown or abbreviated option, a ``--priority``
outside its choices, a catalog that is not a directory, a sender or recipient that does not
resolve — returns None before anything is read or written, and :mod:`st2.entry` runs the click
CLI instead, which prints its own usage or error exactly as before. Once the names resolve,
the send and its receipt are the click command's (:func:`st2.cli.message.send_command`): the
same bus calls, the same output bytes, and its failures rendered through the same click
exception (imported only then), so stdout, stderr and the exit status are byte-identical
whichever route ran (tests/bus/test_fast_send.py compares them).

Standard library only at import; the bus is imported when a send is recognized.
"""

from __future__ import annotations

import os
import sys

ROOT_OPTIONS = ("--catalog", "--host")
SEND_OPTIONS = ("--to-id", "-m", "--message", "--subject", "--in-reply-to", "--tags", "--priority",
                "--idempotency-key", "--as", "--catalog", "--host")
SEND_FLAGS = ("--json",)
ALIASES = {"-m": "--message"}
PRIORITIES = ("low", "normal", "high")


def parse_options(words: list[str], options: tuple[str, ...], flags: tuple[str, ...],
                  positionals: int) -> tuple[dict[str, str], set[str], list[str]] | None:
    """``(option values, flags seen, positionals)`` of ``words`` in the plain spellings, or None
    when any word is outside them (the caller then defers to click)."""
    values: dict[str, str] = {}
    seen: set[str] = set()
    bare: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("-"):
            bare.append(word)
            continue
        if word in flags:
            if word in seen:
                return None
            seen.add(word)
            continue
        name, equals, value = word.partition("=")
        if name not in options or (equals and not name.startswith("--")):
            return None
        if not equals:
            if index >= len(words):
                return None
            value = words[index]
            index += 1
        name = ALIASES.get(name, name)
        if name in values or value.startswith("-"):
            return None
        values[name] = value
    if len(bare) > positionals:
        return None
    return values, seen, bare


def run(words: list[str]) -> int | None:
    """Run ``words`` (the argv after ``st2``) when it is a recognized fast verb; None otherwise."""
    try:
        verb = words.index("message")
    except ValueError:
        return None
    if words[verb + 1: verb + 2] != ["send"]:
        return None
    root = parse_options(words[:verb], ROOT_OPTIONS, (), 0)
    send = parse_options(words[verb + 2:], SEND_OPTIONS, SEND_FLAGS, 1)
    if root is None or send is None or (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        return None
    values, flags, bare = send
    if values.get("--priority", "normal") not in PRIORITIES:
        return None
    return message_send(words, root[0], values, "--json" in flags, bare[0] if bare else None)


def message_send(words: list[str], root_values: dict[str, str], values: dict[str, str], as_json: bool,
                 to: str | None) -> int | None:
    """The send of :func:`st2.cli.message.send_command` for already parsed options."""
    from st2.bus import BusError
    from st2.bus.addressing import resolve_seat
    from st2.bus.principals import sender_id
    from st2.catalog.location import resolve_catalog_root, resolve_host

    try:
        root = resolve_catalog_root(values.get("--catalog") or root_values.get("--catalog")
                                    or os.environ.get("CATALOG") or None)
        host = resolve_host(values.get("--host") or root_values.get("--host"))
        if not root.is_dir():
            return None
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

        line = json.dumps(receipt.json_row(), separators=(",", ":"), ensure_ascii=False)
    else:
        line = receipt.filename
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
    return 0


def click_error(message: str) -> int:
    """Show ``message`` as the click CLI shows a refusal (``Error: …`` on stderr), exit 1."""
    import click

    error = click.ClickException(message)
    error.show()
    return error.exit_code
