"""The kit arms' one argv grammar: bare flags, options taking one value (``--name value`` or
``--name=value``), positionals, ``--`` ending option processing, and a dash-led word naming no
option refused. Standard library only."""

from __future__ import annotations


class ShapeRefusal(ValueError):
    """The argv is not of the arm's shape; the message is one line."""


def parse(argv: list[str], flags: tuple[str, ...] = (), options: tuple[str, ...] = ()) -> tuple[set[str], dict[str, str], list[str]]:
    """Return (flags seen, option values, positionals). Raise :class:`ShapeRefusal`."""
    words = list(argv)
    seen: set[str] = set()
    values: dict[str, str] = {}
    positionals: list[str] = []
    escaped = False
    while words:
        word = words.pop(0)
        name = word.split("=", 1)[0]
        if escaped:
            positionals.append(word)
        elif word == "--":
            escaped = True
        elif word in flags:
            seen.add(word)
        elif name in options:
            if "=" in word:
                values[name] = word.split("=", 1)[1]
            elif words:
                values[name] = words.pop(0)
            else:
                raise ShapeRefusal(f"{name} needs a value")
        elif word.startswith("-") and word != "-":
            raise ShapeRefusal(f"unrecognized option: {word}")
        else:
            positionals.append(word)
    return seen, values, positionals


def resolve_knobs(environ, err, name: str):
    """The resolved knobs, or None after writing every finding as ``<name>: <finding>`` to
    ``err`` (the caller exits 2: a broken machine gates nothing)."""
    from st2 import knobs as knob_table

    try:
        return knob_table.resolve(environ)
    except knob_table.KnobError as error:
        for finding in error.findings:
            err.write(f"{name}: {finding}\n")
        return None
