"""Verbs run without click when their argv has the common, well-formed shape.

Agents send mail many times an hour, and importing click and the CLI tree costs ``st2 message
send`` as much as the send itself (measured in benchmarks/hot_paths.py), and ``st2 agents`` a
tenth of its 627-seat roster (benchmarks/roster.py). :func:`run` recognizes
``st2 [--catalog C] [--host H] message send [TO] [options]`` and ``st2 [--catalog C] [--host H]
agents [options]`` where every word is one the click command accepts spelled one plain way
(``--name value``, ``--name=value``, ``-m value``, the flags), no option repeats, no value or
positional starts with ``-`` and stdout and stderr are UTF-8. Anything else — ``--help``,
``--``, an unknown or abbreviated option, a ``--priority`` or ``--status`` outside its choices,
a catalog that is not a directory, a sender or recipient that does not
resolve, an ``--identity`` naming no seat, an OS error while the roster reads — returns None
before anything is printed or sent, and :mod:`st2.entry` runs the click CLI instead, which
prints its own usage or error exactly as before. Otherwise the verb is the click command's
(:func:`st2.cli.message.send_command`, :func:`st2.cli.agents.agents`): the same calls, the same
output bytes (text holding an escape is echoed by click itself, which strips ANSI sequences off
a terminal), a send's failures rendered through the same click exception (imported only then),
so stdout, stderr and the exit status are byte-identical whichever route ran
(tests/bus/test_fast_send.py and tests/roster/test_fast_agents.py compare them).

Standard library only at import; the bus or the roster is imported when its verb is recognized.
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


AGENTS_OPTIONS = ("--status", "--identity", "--catalog", "--host")
AGENTS_FLAGS = ("--json", "--enrich")


def utf8(stream) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "") == "utf8"


def verb_at(words: list[str]) -> int | None:
    """The index of the verb: the first word that is no root option or its value."""
    index = 0
    while index < len(words):
        word = words[index]
        if word in ROOT_OPTIONS:
            index += 2
        elif word.startswith(tuple(option + "=" for option in ROOT_OPTIONS)):
            index += 1
        elif word.startswith("-"):
            return None
        else:
            return index
    return None


def run(words: list[str]) -> int | None:
    """Run ``words`` (the argv after ``st2``) when it is a recognized fast verb; None otherwise."""
    verb = verb_at(words)
    if verb is None or not (utf8(sys.stdout) and utf8(sys.stderr)):
        return None
    root = parse_options(words[:verb], ROOT_OPTIONS, (), 0)
    if root is None:
        return None
    if words[verb] == "driver":
        from st2.drivers import session_route

        return session_route.run(words, verb, root[0])
    if words[verb] == "agents":
        parsed = parse_options(words[verb + 1:], AGENTS_OPTIONS, AGENTS_FLAGS, 0)
        from st2.records.status import PRESENCES

        if parsed is None or parsed[0].get("--status", "unknown") not in PRESENCES:
            return None
        return agents(words, root[0], parsed[0], parsed[1])
    if words[verb + 1: verb + 2] != ["send"] or words[verb] != "message":
        return None
    send = parse_options(words[verb + 2:], SEND_OPTIONS, SEND_FLAGS, 1)
    if send is None:
        return None
    values, flags, bare = send
    if values.get("--priority", "normal") not in PRIORITIES:
        return None
    return message_send(words, root[0], values, "--json" in flags, bare[0] if bare else None)


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


def agents(words: list[str], root_values: dict[str, str], values: dict[str, str], flags: set[str]) -> int | None:
    """:func:`st2.cli.agents.agents` for already parsed options (both run :func:`st2.roster.verb.agents`)."""
    from st2.roster.verb import agents as print_roster

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


def message_send(words: list[str], root_values: dict[str, str], values: dict[str, str], as_json: bool,
                 to: str | None) -> int | None:
    """The send of :func:`st2.cli.message.send_command` for already parsed options, reading the
    catalog's seats once (:class:`st2.bus.addressing.OneReading`) as that command does."""
    from st2.bus.addressing import OneReading

    with OneReading():
        return _message_send(words, root_values, values, as_json, to)


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
